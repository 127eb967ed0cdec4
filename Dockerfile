# The bank's image: Node.js 20, production dependencies and the service compiled to JavaScript
# (scripts/build.mjs, in the build stage: dist/main.js, dist/cli/main.js and their chunks); the
# image holds no TypeScript, and nothing is compiled at run time. The same image runs the operator CLI (bin/bank.js runs
# dist/cli/main.js), e.g. compose.yaml's `bank nats init`.
# NODE_IMAGE: Node.js 20 on Debian bookworm. Without a registry, scripts/podman-images.ts makes
# one from Debian's packages and this machine's Node.js and passes it here (docs/operations.md,
# "Images without a registry").
ARG NODE_IMAGE=node:20-bookworm-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY scripts/build.mjs scripts/node-bundle.mjs ./scripts/
COPY src ./src
# --production: without the development entry (dist/dev/start.js, `npm start`).
RUN node scripts/build.mjs --production

FROM ${NODE_IMAGE}
# `bank nats init` makes the NATS CA and server certificate with the openssl command.
RUN apt-get update && apt-get install -y --no-install-recommends openssl && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY bin ./bin
COPY --from=build /app/dist ./dist
# /data: the bank's data directory; /nats: where `bank nats init` writes (a volume in compose.yaml).
RUN mkdir -p /data /nats && chown node:node /data /nats
USER node
ENV BANK_DATA_DIR=/data
# Signals go straight to node (no npm or shell in between), so SIGTERM stops the bank cleanly.
# A 64 MB young generation spends less of a busy bank's time collecting garbage (docs/performance.md).
CMD ["node", "--max-semi-space-size=64", "dist/main.js"]
