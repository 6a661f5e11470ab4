# ere-gateway: a production-like image. Multi-stage: dependencies are installed in their own stage, the
# runtime stage holds only node_modules (production dependencies; tsx is one, the service runs TypeScript
# directly), the sources, SQL migrations and schemas, and runs as the unprivileged `node` user.
# The code itself runs on Node 20 and later; the image uses the current LTS.
ARG NODE_IMAGE=node:24-bookworm-slim

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
COPY package.json package-lock.json ./
COPY src ./src
COPY schemas ./schemas
COPY migrations ./migrations
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
VOLUME ["/data"]
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Migrations first (npm run migrate; safe with several replicas: an advisory lock), then the service.
# exec replaces the shell, so SIGTERM from `docker stop` reaches node directly (graceful shutdown, exit 0).
CMD ["sh", "-c", "node --import tsx src/db/migrate-cli.ts && exec node --import tsx src/main.ts"]
