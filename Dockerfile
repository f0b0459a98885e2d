# syntax=docker/dockerfile:1
# agentline: one gateway process. `docker compose up --build` runs several behind a proxy on one
# PostgreSQL (docker-compose.yml); alone it serves on :8080 with the embedded database.

# --- build: all dependencies, TypeScript -> dist/ -------------------------------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The SDK is an npm workspace: its manifest must be there for the install.
COPY sdk/package.json ./sdk/
# patches/: a fix to a dependency applied by patch-package on install (see docs/decisions/0053-postgres-js-patch.md).
COPY patches ./patches
RUN npm ci --no-audit --no-fund
# Sources and tsconfig files (.dockerignore keeps node_modules, dist, tests and data out).
COPY . .
RUN npm run build

# --- runtime: production dependencies, compiled code, migrations ---------------------------------
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json ./sdk/
# patches/: a fix to a dependency applied by patch-package on install (see docs/decisions/0053-postgres-js-patch.md).
COPY patches ./patches
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The CLI's API commands use the built SDK (node_modules/@agentline/sdk links to ./sdk).
COPY --from=build /app/sdk/dist ./sdk/dist
# Migrations run at start-up, read from the project root (the folder of package.json).
COPY core/db/migrations ./core/db/migrations
# The embedded database (used when DATABASE_URL is unset) goes in /app/.data, owned by `node`.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/bin/agentline.js", "serve"]
