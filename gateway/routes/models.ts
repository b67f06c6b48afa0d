import Router from '@koa/router';
import type { Model } from '../../domain/catalogue';
import { PROTOCOLS } from '../../domain/catalogue';
import { isModelAllowed } from '../../domain/api-key';
import type { PlatformDeps } from '../../capabilities/deps';
import type { AccountsDeps } from '../../capabilities/accounts/deps';
import type { CatalogueDeps } from '../../capabilities/catalogue/deps';
import type { GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { GatewayError } from '../../domain/errors';
import { MODEL_ENTRY_PATH, MODEL_ENTRY_ROUTE } from './model-paths';
import { capturedSegment } from './captured';

/** Registry entry of spec 1 section 2.3. */
function registryEntry(m: Model) {
  return { id: m.id, object: 'model', created: 0, owned_by: m.owned_by };
}

/** How each chat protocol is served for a model: the model-by-protocol matrix (spec 1 section 4.10). */
function protocolMatrix(m: Model): Record<string, string> {
  if (m.endpoint_type !== 'chat') return {};
  return Object.fromEntries(PROTOCOLS.map((p) => [p, m.channels[p]?.[0]?.kind ?? 'none']));
}

export function publicEntry(m: Model) {
  return {
    id: m.id,
    object: 'model',
    owned_by: m.owned_by,
    family: m.family,
    endpoint_type: m.endpoint_type,
    callable: m.callable,
    retired: m.retired,
    capabilities: m.capabilities,
    context_window: m.context_window ?? null,
    default_max_tokens: m.default_max_tokens ?? null,
    aliases: m.aliases,
    pricing: m.pricing,
    protocols: protocolMatrix(m),
  };
}

export function modelRoutes(deps: PlatformDeps & AccountsDeps & CatalogueDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  // Discovery: Bearer or x-api-key only; no balance check.
  router.get(
    '/v1/models',
    authenticate(deps, { methods: 'header-only', billable: false, touchLastUsed: false }),
    rateLimit(),
    (ctx) => {
      const allowed = ctx.state.auth!.key.allowed_models;
      const data = deps.catalogue().models.filter((m) => isModelAllowed(allowed, [m.id, ...m.aliases])).map(registryEntry);
      ctx.body = { object: 'list', data };
    },
  );
  // One registry entry by id or alias (the SDKs' models.retrieve): what the list would show this key.
  router.get(
    MODEL_ENTRY_ROUTE,
    MODEL_ENTRY_PATH,
    authenticate(deps, { methods: 'header-only', billable: false, touchLastUsed: false }),
    rateLimit(),
    (ctx) => {
      const id = capturedSegment(ctx.captures);
      const model = deps.catalogue().resolve(id);
      if (!model || !isModelAllowed(ctx.state.auth!.key.allowed_models, [model.id, ...model.aliases])) {
        throw new GatewayError('model_not_found', `The model '${id}' does not exist or is not available to this key`, { status: 404, param: 'model' });
      }
      ctx.body = registryEntry(model);
    },
  );
  router.get('/api/v1/models/public', (ctx) => {
    ctx.body = { object: 'list', data: deps.catalogue().models.map(publicEntry) };
  });
  return router;
}
