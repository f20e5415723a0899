# Omnigate in a container: the same `omnigate start` as on a host, the data directory as a volume.
# Build stage: every dependency (the docs builder is a dev dependency), the Redoc page, then dev dependencies pruned.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# better-sqlite3 compiles from source when no prebuilt binary is reachable; node:20-bookworm has python3, make, g++.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY openapi ./openapi
COPY generated ./generated
COPY server ./server
COPY scripts ./scripts
COPY bin ./bin
RUN REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npm run docs && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
ENV HOST=0.0.0.0 PORT=8080 OMNIGATE_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
CMD ["node", "bin/omnigate.mjs", "start"]
