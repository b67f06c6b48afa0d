import Router from '@koa/router';
import { GatewayError } from '../../domain/errors';
import { DifyRequest } from '../../capabilities/knowledge/dify';
import type { PlatformDeps } from '../../capabilities/deps';
import type { AccountsDeps } from '../../capabilities/accounts/deps';
import type { KnowledgeDeps } from '../../capabilities/knowledge/deps';
import type { Ctx, GatewayState, Middleware } from '../context';
import { authenticate } from '../middleware/auth';
import { jsonBody } from '../middleware/body';
import { rateLimit } from '../middleware/rate-limit';
import { validBody } from '../middleware/validate';

/**
 * `POST /api/v1/integrations/dify/retrieval`: Dify's External Knowledge API
 * (register `{base_url}/api/v1/integrations/dify` as the endpoint; Dify
 * appends `/retrieval`). Free like every knowledge read. Errors in Dify's
 * shape `{error_code, error_msg}`: 1001 missing or malformed Authorization
 * header, 1002 authorization failed (unknown, revoked or expired key), 2001
 * knowledge base missing or unreadable, 1000 invalid request body.
 */
export const DIFY_PREFIX = '/api/v1/integrations/dify';

export function difyRoutes(deps: PlatformDeps & AccountsDeps & KnowledgeDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: DIFY_PREFIX });
  const auth = authenticate(deps, { methods: 'header-only', billable: false, touchLastUsed: true });

  router.post('/retrieval', difyErrors(), requireKeyHeader(), auth, rateLimit(), jsonBody(1 << 20), async (ctx) => {
    ctx.body = await deps.dify.retrieve(ctx.state.auth!.account.id, validBody(ctx, DifyRequest));
  });
  return router;
}

/** 1001 before any lookup: Dify sends `Authorization: Bearer {key}`. */
function requireKeyHeader(): Middleware {
  return async function keyHeader(ctx: Ctx, next) {
    const authz = ctx.get('authorization');
    if (!ctx.get('x-api-key') && !/^Bearer\s+\S+/i.test(authz)) {
      throw new DifyError(401, 1001, "Invalid Authorization header format. Expected 'Bearer <api-key>' format.");
    }
    await next();
  };
}

class DifyError extends Error {
  constructor(readonly status: number, readonly errorCode: number, message: string) {
    super(message);
  }
}

function difyErrors(): Middleware {
  return async function renderDifyErrors(ctx: Ctx, next) {
    try {
      await next();
    } catch (thrown) {
      let err: DifyError;
      if (thrown instanceof DifyError) err = thrown;
      else if (thrown instanceof GatewayError && thrown.status === 401) err = new DifyError(401, 1002, `Authorization failed: ${thrown.message}`);
      else if (thrown instanceof GatewayError && thrown.status === 404) err = new DifyError(404, 2001, 'The knowledge does not exist (or this key may not read it).');
      else if (thrown instanceof GatewayError && thrown.status < 500) {
        if (thrown.headers) ctx.set(thrown.headers);
        err = new DifyError(thrown.status, thrown.status === 429 ? 1003 : 1000, thrown.message);
      } else throw thrown;
      ctx.status = err.status;
      ctx.body = { error_code: err.errorCode, error_msg: err.message };
    }
  };
}
