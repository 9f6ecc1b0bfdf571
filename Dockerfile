# syntax=docker/dockerfile:1
# The operator's images for users with Docker. The project itself builds them without a daemon
# (hack/build-images.ts, docs/adr/20261203-daemonless-images.md); this gives the same layout on distroless:
#   docker build -t aicr-operator .                                                  # every controller
#   docker build --target controller --build-arg CONTROLLER=planner -t aicr-operator-planner .
# aicr-operator starts the controller named by its first argument: `docker run aicr-operator planner --help`.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY apps ./apps
COPY packages ./packages
COPY e2e/package.json ./e2e/package.json
COPY hack ./hack
RUN npm ci --no-audit --no-fund
RUN npx tsx hack/build-apps.ts \
 && for d in dist/apps/*/; do rm -f "$d/meta.json"; done \
 && npx tsx hack/build-images.ts --dispatcher dist/aicr-operator.mjs

FROM gcr.io/distroless/nodejs24-debian12:nonroot AS controller
ARG CONTROLLER
COPY --from=build /src/dist/apps/${CONTROLLER} /app
WORKDIR /app
ENV NODE_ENV=production
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node", "/app/main.mjs"]

FROM gcr.io/distroless/nodejs24-debian12:nonroot AS aicr-operator
COPY --from=build /src/dist/apps /app
COPY --from=build /src/dist/aicr-operator.mjs /app/aicr-operator.mjs
WORKDIR /app
ENV NODE_ENV=production
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node", "/app/aicr-operator.mjs"]
