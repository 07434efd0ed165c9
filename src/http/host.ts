/**
 * Host-name helpers for the DNS-rebinding guard: split a `Host` header into its name, and tell
 * loopback names and addresses apart. Pure string work; no DNS lookups (a name like
 * "localhost.evil.example" is not loopback, whatever it resolves to).
 */

const IPV4_LOOPBACK = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * The host name of a `Host` header value, lowercased, without port, brackets or a trailing dot:
 * "Example.COM:8000" → "example.com", "[::1]:8000" → "::1". Undefined when malformed.
 */
export function hostName(header: string): string | undefined {
	let s = header.trim().toLowerCase();
	if (s.startsWith("[")) {
		const end = s.indexOf("]");
		if (end < 0) return undefined;
		const rest = s.slice(end + 1);
		if (rest !== "" && !/^:\d*$/.test(rest)) return undefined;
		s = s.slice(1, end);
	} else {
		const colon = s.indexOf(":");
		if (colon >= 0) {
			// More than one colon without brackets is not a valid Host.
			if (s.indexOf(":", colon + 1) >= 0 || !/^\d*$/.test(s.slice(colon + 1)))
				return undefined;
			s = s.slice(0, colon);
		}
		// "localhost." is the same name as "localhost"; treat it so on both sides.
		if (s.endsWith(".")) s = s.slice(0, -1);
	}
	return s === "" ? undefined : s;
}

/** Whether `name` (as `hostName` returns it, or a listen address) is a loopback name or address. */
export function isLoopback(name: string): boolean {
	const s = name.toLowerCase().replace(/^\[(.*)\]$/, "$1");
	if (s === "localhost" || s === "::1" || s === "0:0:0:0:0:0:0:1") return true;
	const v4 = IPV4_LOOPBACK.exec(s.replace(/^::ffff:/, ""));
	return v4?.slice(1).every((octet) => Number(octet) <= 255) === true;
}
