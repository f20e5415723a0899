# Omnigate in a container: the same `omnigate start` as on a host, the data directory as a volume.
# Build stage: every dependency (the compiler's types and the docs builder are dev dependencies), the compiled
# server (dist/), the Redoc page, then dev dependencies pruned.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# better-sqlite3 compiles from source when no prebuilt binary is reachable; node:20-bookworm has python3, make, g++.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY openapi ./openapi
COPY generated ./generated
COPY server ./server
COPY scripts ./scripts
COPY console ./console
COPY bin ./bin
# `npm run build` compiles server/ into dist/, saves the tokenizer's ranks and builds the console (Vite, a dev
# dependency, into console/dist); the start checks that build is
# current and would otherwise compile again, which it cannot do in the read-only /app of the final stage.
RUN npm run build \
 && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npm run docs \
 && npm prune --omit=dev --no-audit --no-fund \
 && touch dist/.tsbuildinfo \
 && node scripts/ensure-build.mjs

FROM node:20-bookworm-slim
WORKDIR /app
# /app stays root's and read-only to the server; only /data, its data directory, belongs to the `node` user.
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
ENV HOST=0.0.0.0 PORT=8080 OMNIGATE_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
# node itself is PID 1 and handles SIGTERM (the server drains and exits 0): no shell in between to swallow it.
CMD ["node", "bin/omnigate.mjs", "start"]
