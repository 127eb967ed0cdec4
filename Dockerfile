# The bank's image: Node.js 20, production dependencies, the TypeScript run through tsx.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY tsconfig.json ./
RUN mkdir -p /data && chown node:node /data
USER node
ENV BANK_DATA_DIR=/data
# Signals go straight to node (no npm or shell in between), so SIGTERM stops the bank cleanly.
# A 64 MB young generation spends less of a busy bank's time collecting garbage (docs/performance.md).
CMD ["node", "--max-semi-space-size=64", "--import", "tsx", "src/main.ts"]
