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
CMD ["node", "--import", "tsx", "src/main.ts"]
