#!/bin/sh
# Installs the t3code-mcp binary from the GitHub releases of t3code-mcp/t3code-mcp.
#
#   curl -fsSL https://raw.githubusercontent.com/t3code-mcp/t3code-mcp/main/install.sh | sh
#   sh install.sh [--version 0.1.0] [--dir ~/.local/bin]
#
# Picks the build for this OS and CPU (linux-x64, linux-arm64, darwin-arm64), downloads it and
# the release's SHA256SUMS, verifies the checksum and only then installs it (default
# ~/.local/bin). Nothing is installed when any step fails.
#
# Environment (the options win):
#   T3CODE_MCP_VERSION       version to install (default: the latest release)
#   T3CODE_MCP_INSTALL_DIR   where to put the binary (default: ~/.local/bin)
#   T3CODE_MCP_REPO          owner/name of the GitHub repository, for a fork
#   T3CODE_MCP_RELEASES_URL  releases base URL (default https://github.com/$T3CODE_MCP_REPO/releases);
#                            assets are read from <base>/download/v<version>/<file> and
#                            <base>/latest/download/<file> (a mirror, or a local server in tests)
set -eu

repo="${T3CODE_MCP_REPO:-t3code-mcp/t3code-mcp}"
version="${T3CODE_MCP_VERSION:-}"
dir="${T3CODE_MCP_INSTALL_DIR:-}"

say() { printf '%s\n' "$*" >&2; }
die() {
	say "install.sh: $*"
	exit 1
}
usage() {
	sed -n '2,17p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//' >&2 || true
}

while [ $# -gt 0 ]; do
	case "$1" in
	--version)
		[ $# -ge 2 ] || die "--version needs a value, e.g. --version 0.1.0"
		version="$2"
		shift 2
		;;
	--version=*)
		version="${1#*=}"
		shift
		;;
	--dir)
		[ $# -ge 2 ] || die "--dir needs a value, e.g. --dir ~/.local/bin"
		dir="$2"
		shift 2
		;;
	--dir=*)
		dir="${1#*=}"
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument '$1' (accepted: --version X.Y.Z, --dir DIR, --help)" ;;
	esac
done

case "$repo" in
*/*) ;;
*) die "T3CODE_MCP_REPO must be owner/name, got '$repo'" ;;
esac
version="${version#v}"
if [ -n "$version" ] && ! printf '%s' "$version" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$'; then
	die "--version must look like 1.2.3 (or v1.2.3), got '$version'"
fi
if [ -z "$dir" ]; then
	[ -n "${HOME:-}" ] || die "HOME is not set: pass --dir"
	dir="$HOME/.local/bin"
fi
base="${T3CODE_MCP_RELEASES_URL:-https://github.com/$repo/releases}"
base="${base%/}"

# --- which build -------------------------------------------------------------------------
os=$(uname -s)
arch=$(uname -m)
case "$os" in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) die "no build for OS '$os' (builds: linux-x64, linux-arm64, darwin-arm64); use the container image ghcr.io/$repo or build from source" ;;
esac
case "$arch" in
x86_64 | amd64) arch=x64 ;;
aarch64 | arm64) arch=arm64 ;;
*) die "no build for CPU '$arch' (builds: linux-x64, linux-arm64, darwin-arm64)" ;;
esac
# A shell under Rosetta reports x86_64 on Apple silicon; the arm64 build is the right one.
if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
	arch=arm64
fi
target="$os-$arch"
case "$target" in
linux-x64 | linux-arm64 | darwin-arm64) ;;
*) die "no build for $target (builds: linux-x64, linux-arm64, darwin-arm64); use the container image ghcr.io/$repo or build from source" ;;
esac
asset="t3code-mcp-$target"

# --- tools -------------------------------------------------------------------------------
if command -v curl >/dev/null 2>&1; then
	fetch() { curl -fsSL --retry 2 -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
	fetch() { wget -q -O "$2" "$1"; }
else
	die "needs curl or wget"
fi
if command -v sha256sum >/dev/null 2>&1; then
	sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
	sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
	die "needs sha256sum or shasum to verify the download"
fi

# --- download and verify -----------------------------------------------------------------
if [ -n "$version" ]; then
	from="$base/download/v$version"
	label="$version"
else
	from="$base/latest/download"
	label="latest"
fi
tmp=$(mktemp -d 2>/dev/null || mktemp -d -t t3code-mcp)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

say "Downloading $asset ($label) from $from"
fetch "$from/$asset" "$tmp/$asset" || die "could not download $from/$asset (does release $label have a $target build?)"
fetch "$from/SHA256SUMS" "$tmp/SHA256SUMS" || die "could not download $from/SHA256SUMS"

expected=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/SHA256SUMS")
[ -n "$expected" ] || die "SHA256SUMS of $label has no line for $asset; nothing installed"
actual=$(sha256 "$tmp/$asset")
if [ "$actual" != "$expected" ]; then
	die "checksum mismatch for $asset: SHA256SUMS says $expected, the download is $actual; nothing installed"
fi

# --- install -----------------------------------------------------------------------------
mkdir -p "$dir" || die "cannot create $dir"
chmod 755 "$tmp/$asset"
# Copy next to the target, then rename: a running old binary is never half-overwritten.
cp "$tmp/$asset" "$dir/.t3code-mcp.new.$$" || die "cannot write to $dir"
mv -f "$dir/.t3code-mcp.new.$$" "$dir/t3code-mcp"

installed=$("$dir/t3code-mcp" --version 2>/dev/null || true)
say "Installed t3code-mcp ${installed:-$label} to $dir/t3code-mcp (sha256 $actual)"
case ":${PATH:-}:" in
*":$dir:"*) ;;
*) say "Note: $dir is not on PATH; add it, e.g. export PATH=\"$dir:\$PATH\"" ;;
esac
