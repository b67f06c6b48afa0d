import { GatewayError, type ErrorCode } from '../../domain/errors';
import type { Logger } from '../../platform/logger';
import type { Ctx, Middleware } from '../context';
import { errorBody, shapeOfPath } from '../errors/shapes';
import { ClientDisconnected, lingerAfterAnswer } from './body';
import { isStoreUnavailable } from '../../platform/store-retry';

/**
 * First in the chain: every error becomes a response in the called
 * endpoint's shape. Unknown errors are logged with the trace id and shown to
 * the client only as internal_error.
 */
export function errorHandler(log: Logger): Middleware {
  return async function handleErrors(ctx: Ctx, next) {
    try {
      await next();
      if (ctx.status >= 400 && ctx.respond !== false && (ctx.body === undefined || ctx.body === null)) throw routingError(ctx);
    } catch (thrown) {
      // Nobody is left to answer; the usage capture has recorded the call as interrupted.
      if (thrown instanceof ClientDisconnected) {
        ctx.status = 499; // the access log's status for a client that left (nginx's convention); nothing is sent
        return;
      }
      let err = toGatewayError(thrown, ctx, log);
      if (ctx.state.errorDialect === 'digital-human') err = digitalHumanDialect(err);
      if (ctx.headerSent || !ctx.writable) return;
      ctx.status = err.status;
      if (err.headers) ctx.set(err.headers);
      // A refusal that closes the connection mid-upload (413, 408): the client gets to read it (middleware/body.ts `lingerAfterAnswer`).
      if (String(err.headers?.Connection ?? '').toLowerCase() === 'close') lingerAfterAnswer(ctx.req);
      ctx.body = errorBody(err, shapeOfPath(ctx.path));
    }
  };
}

/**
 * The router's own refusals, which come with no body: 404 (no route), 405
 * (a route exists for other methods; the router set `Allow`), 501 (a method
 * no route knows). Rendered like every other error, in the endpoint's shape.
 */
function routingError(ctx: Ctx): GatewayError {
  if (ctx.status === 404) return new GatewayError('not_found', `no route for ${ctx.method} ${ctx.path}`, { status: 404, type: 'invalid_request_error' });
  const allow = ctx.response.get('Allow');
  // 501 is the router's answer to a method it does not know at all (TRACE, CONNECT, ...) on a path it serves:
  // to the client that is the same refusal as 405, with the same Allow list (never a 5xx for a client's choice).
  if (ctx.status === 405 || ctx.status === 501) {
    return new GatewayError('invalid_request', `method ${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, { status: 405, headers: { Allow: allow } });
  }
  return new GatewayError('invalid_request', `${ctx.method} ${ctx.path}: HTTP ${ctx.status}`, { status: ctx.status });
}

/** The digital-human endpoints' own codes for the same refusals (spec 2 section 7.4). */
function digitalHumanDialect(err: GatewayError): GatewayError {
  const remap: Partial<Record<string, { code: ErrorCode; status: number; type: string }>> = {
    invalid_api_key: { code: 'authentication_error', status: 401, type: 'authentication_error' },
    model_not_allowed: { code: 'model_not_allowed', status: 403, type: 'permission_error' },
    model_not_found: { code: 'model_not_found', status: 404, type: 'invalid_request_error' },
    invalid_request: { code: 'invalid_request_error', status: 400, type: 'invalid_request_error' },
  };
  const to = remap[err.code];
  return to ? new GatewayError(to.code, err.message, { status: to.status, type: to.type, param: err.param, headers: err.headers }) : err;
}

function toGatewayError(thrown: unknown, ctx: Ctx, log: Logger): GatewayError {
  if (thrown instanceof GatewayError) {
    if (thrown.status >= 500) log.warn('request failed', { trace: ctx.state.requestId, code: thrown.code, message: thrown.message });
    return thrown;
  }
  const status = (thrown as { status?: number; expose?: boolean }).status;
  if (status && status >= 400 && status < 500 && (thrown as { expose?: boolean }).expose) {
    return new GatewayError(status === 413 ? 'invalid_request' : 'invalid_request', (thrown as Error).message, { status });
  }
  // The store did not answer (down or restarting): the spec's code and status, and when to come back.
  if (isStoreUnavailable(thrown)) {
    log.warn('store unavailable', { trace: ctx.state.requestId, path: ctx.path, err: thrown });
    return new GatewayError('internal_error', `a store is briefly unavailable; retry the request (trace id ${ctx.state.requestId})`, { headers: { 'retry-after': '1' } });
  }
  log.error('unhandled error', { trace: ctx.state.requestId, path: ctx.path, err: thrown });
  return new GatewayError('internal_error', `internal error; quote trace id ${ctx.state.requestId}`);
}
