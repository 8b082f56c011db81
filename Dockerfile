# Build stage: install the pinned toolchain from npm and compile the single executable.
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json bunfig.toml drizzle.config.ts ./
COPY scripts ./scripts
COPY migrations ./migrations
COPY migrations-pg ./migrations-pg
COPY src ./src
RUN npm run build && mkdir -p /data

# Runtime stage: glibc + libstdc++ (sharp's libvips needs it) and the binary, nothing else. Runs as non-root.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/dist/seedcast /usr/local/bin/seedcast
COPY --from=build --chown=65532:65532 /data /data
ENV DATA_DIR=/data HOST=0.0.0.0 PORT=8787
VOLUME ["/data"]
EXPOSE 8787
ENTRYPOINT ["/usr/local/bin/seedcast"]
CMD ["serve"]
