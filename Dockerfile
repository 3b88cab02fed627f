# syntax=docker/dockerfile:1
# kube-identity container image: `docker build -t kube-identity:dev .` (or `make image`).
#
# Stage 1 compiles TypeScript, then drops dev dependencies. It needs no C++ toolchain: better-sqlite3
# ships its addon prebuilt for Node-API (glibc and musl, x64 and arm64), so npm ci compiles nothing.
# Stage 2 is distroless Node 24 on Debian 12 (glibc 2.36, as the bookworm builder; the prebuilt addon
# needs 2.34), with no shell or package manager, running as the distroless "nonroot" user (65532).
#
# Signals: there is no tini. Node runs as PID 1 and kube-identity installs its own SIGTERM/SIGINT
# handlers (src/lib/shutdown.ts: first signal drains, second forces exit); it starts no child
# processes, so there are no zombies to reap. Use `docker run --init` if you add any.
#
# Filesystem: nothing is written at runtime outside mounted volumes and /tmp, so the image runs with
# readOnlyRootFilesystem: true (the chart and deploy/ mount an emptyDir on /tmp).

# The major of the Node that make test pins (hack/ensure-node.sh); test/deploy/dockerfile.test.ts checks they agree.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bench ./bench
RUN npm run build \
 && npm prune --omit=dev \
 && npm cache clean --force
# What `kube-identity version` and kube_identity_build_info report beside package.json's version
# (src/lib/version.ts): `docker build --build-arg GIT_COMMIT=$(git rev-parse HEAD) --build-arg BUILD_DATE=...`
# (make image passes both). Declared after the build so a new commit does not rebuild the layers above.
COPY hack/build-info.mjs ./hack/
ARG GIT_COMMIT=unknown
ARG BUILD_DATE=
RUN node hack/build-info.mjs "$GIT_COMMIT" "$BUILD_DATE"

FROM gcr.io/distroless/nodejs${NODE_VERSION}-debian12:nonroot
LABEL org.opencontainers.image.title="kube-identity" \
      org.opencontainers.image.description="CSR approver/signer controller and embedded identity API server" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build --chown=0:0 /src/package.json /src/build-info.json ./
COPY --from=build --chown=0:0 /src/node_modules ./node_modules
COPY --from=build --chown=0:0 /src/dist ./dist
USER 65532:65532
# Metrics, /healthz and /readyz (--metrics-bind-address, default :8080).
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "dist/src/cmd/main.js"]
CMD ["controller"]
