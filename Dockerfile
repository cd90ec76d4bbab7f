# Atelier: one image for API nodes (`serve`), workers (`worker`) and operator commands.
# Not built in CI (no container runtime there): keep it plain. See docs/deployment.md.
#
#   docker build -t atelier .
#   docker run -p 8080:8080 -v atelier-data:/data -e PUBLIC_URL=http://localhost:8080 atelier
#
# The bundled ffmpeg and ffprobe (npm) are linux-x64 builds; on arm64 install Debian's ffmpeg
# in the runtime stage and set FFMPEG_PATH and FFPROBE_PATH.

FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# What npm's postinstall runs (scripts/postinstall.mjs, then .ts); it is run again below for the
# user the server runs as, with all of the source there.
COPY scripts/postinstall.mjs scripts/supported-node.mjs scripts/postinstall.ts scripts/pglite-template.ts ./scripts/
COPY src/shared/wasm-tiering.ts ./src/shared/
COPY src/store/pglite-template.ts ./src/store/
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
# glibc's malloc settings, as `bin/atelier serve` sets for itself when started without them
# (scripts/glibc-malloc.mjs); set here, it need not restart.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=65536
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY scripts/supported-node.mjs scripts/glibc-malloc.mjs scripts/postinstall.ts scripts/pglite-template.ts ./scripts/
COPY src ./src
RUN mkdir /data && chown node:node /data
USER node
# The embedded database's data-directory template (in ~/.cache/atelier), copied by a
# container's first start instead of running PGlite's initdb, and Node's compile cache.
RUN node scripts/postinstall.ts
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s \
  CMD node -e "fetch('http://127.0.0.1:8080/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# V8's young generation capped at 4 MiB per semi-space, as `npm start` runs (README, "Start
# and footprint"): about 30 MiB less resident memory.
ENTRYPOINT ["node", "--max-semi-space-size=4", "bin/atelier"]
CMD ["serve"]
