import type { Ctx } from './context';

/**
 * The origin the caller reached (`http://host:port`), for links the gateway
 * hands out. Not `ctx.origin`: in Koa 3 that is the request's `Origin` header.
 */
export function requestOrigin(ctx: Ctx): string {
  return `${ctx.protocol}://${ctx.host}`;
}
