# syntax=docker/dockerfile:1
# t3code-mcp: one compiled Bun binary on distroless. Builds from a plain checkout (nothing
# prebuilt), so a compose `build.context` of "<git url>#<ref>" works. The build stage runs on the
# builder's own platform and cross-compiles for the target, so no emulation is needed.
#
#   docker build --build-arg VERSION=0.1.0 -t t3code-mcp .
#   docker buildx build --platform linux/amd64,linux/arm64 -t t3code-mcp .
# Releases are built by .github/workflows/release.yml and pushed as ghcr.io/t3code-mcp/t3code-mcp.

ARG VERSION=0.1.0

FROM --platform=$BUILDPLATFORM oven/bun:1.4.5 AS build
ARG TARGETARCH
WORKDIR /src
COPY package.json package-lock.json bunfig.toml tsconfig.json ./
# package-lock.json is the one lockfile; bun reads (migrates) it. Only the runtime
# dependencies are needed to compile.
RUN bun install --frozen-lockfile --production
COPY src ./src
# amd64 uses the baseline build (no AVX2 assumption), as the official bun images do.
RUN case "$TARGETARCH" in \
      amd64) target=bun-linux-x64-baseline ;; \
      arm64) target=bun-linux-arm64 ;; \
      *) echo "unsupported TARGETARCH: $TARGETARCH" >&2; exit 1 ;; \
    esac \
 && bun build --compile --minify --sourcemap --bytecode --format=esm \
      --no-compile-autoload-dotenv --no-compile-autoload-bunfig \
      --target="$target" src/index.ts --outfile /out/t3code-mcp \
 && mkdir -p /out/data /out/config

FROM gcr.io/distroless/base-nossl-debian12:nonroot
ARG VERSION
# The release workflow adds revision, created and the rest through docker/metadata-action.
# io.modelcontextprotocol.server.name proves to the MCP registry that this image is server.json's.
LABEL org.opencontainers.image.title="t3code-mcp" \
      org.opencontainers.image.description="MCP server that runs coding threads on remote T3 Code servers" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://github.com/t3code-mcp/t3code-mcp" \
      org.opencontainers.image.url="https://github.com/t3code-mcp/t3code-mcp" \
      io.modelcontextprotocol.server.name="io.github.t3code-mcp/t3code-mcp"
# Never strip the binary: the app lives in its .bun section.
COPY --from=build /out/t3code-mcp /usr/local/bin/t3code-mcp
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build --chown=65532:65532 /out/config /config
ENV T3CODE_MCP_CONFIG=/config/t3code.toml \
    T3CODE_MCP_STATE=/data/t3code-mcp.sqlite \
    T3CODE_MCP_HOST=0.0.0.0
VOLUME ["/data"]
EXPOSE 8000
USER 65532:65532
WORKDIR /data
# distroless has no shell or curl: the binary checks its own /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/t3code-mcp", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/t3code-mcp"]
CMD ["serve"]
