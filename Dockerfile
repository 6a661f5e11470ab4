# ere-gateway: a production-like image. Multi-stage: the build stage installs every dependency and compiles
# src and schemas to plain JavaScript (`npm run build`: tsc into dist/, with the SQL migrations and the bundled MID
# catalog copied beside the code); the deps stage installs the production dependencies only; the runtime stage
# holds node_modules, dist/ and package.json, runs `node` on dist with no TypeScript loader, as the unprivileged
# `node` user. The code itself runs on Node 20.19 and later; the image uses the current LTS.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY schemas ./schemas
COPY migrations ./migrations
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    APP_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build --chown=root:root /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
VOLUME ["/data"]
# https when the service port has TLS (TLS_CERT_FILE), without verifying the certificate: it is this container's own
# service on 127.0.0.1 (D190; fetch cannot skip the verification, node:https can)
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "const t=!!(process.env.TLS_CERT_FILE||'').trim();require(t?'node:https':'node:http').get({host:'127.0.0.1',port:process.env.PORT||8080,path:'/readyz',rejectUnauthorized:false,timeout:4000},r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1)).on('timeout',()=>process.exit(1))"
# Migrations first (npm run migrate:dist; safe with several replicas: an advisory lock), then the service.
# exec replaces the shell, so SIGTERM from `docker stop` reaches node directly (graceful shutdown, exit 0).
# The admin CLI in a running container: node dist/src/cli/admin.js --help
CMD ["sh", "-c", "node dist/src/db/migrate-cli.js && exec node --max-semi-space-size=64 --single-threaded-gc dist/src/main.js"]
