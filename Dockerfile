# One image for every project process; the command picks which:
#   docker run IMAGE gateway | worker [--queue=media|knowledge|webhooks] | seed | simulator
# The gateway and the worker run compiled JavaScript (dev/scripts/build.ts -> dist/);
# seed and simulator run their TypeScript through tsx (a runtime dependency).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    DO_NOT_TRACK=1
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# The gateway and worker entry points as plain JavaScript (no TypeScript loader at run time).
RUN npx tsx dev/scripts/build.ts
# Workers load this prebuilt bundle instead of running webpack at every start.
RUN npx tsx dev/scripts/bundle-workflows.ts /app/dist/workflow-bundle.js
ENV WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
USER node
EXPOSE 8080
ENTRYPOINT ["bash", "dev/scripts/docker-entrypoint.sh"]
CMD ["gateway"]
