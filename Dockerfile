# One image for every service; docker-compose picks the entry point per service.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# pkcs11js (the vault's HSM provider) is a native addon built by node-gyp; the toolchain stays in this stage.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY proto ./proto
COPY packages ./packages
COPY services ./services
RUN npm ci --no-audit --no-fund && npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
USER node
