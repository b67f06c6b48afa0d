import { errors } from '../../domain/errors';
import type { Ctx, Middleware } from '../context';

/**
 * Before any router: a path whose percent-escapes do not decode as UTF-8
 * (`/v1beta/models/%ff%fe:generateContent`) is a 400 in the endpoint's shape.
 * Past this point every path parameter the router hands out is decoded text
 * (the router itself falls back silently to the raw text), and no handler
 * decodes again.
 */
export function wellFormedPath(): Middleware {
  // Not async, and the rest of the chain is returned, not awaited: a check with nothing to do afterwards
  // keeps no suspended frame for the length of the call (a stream holds every awaiting middleware's).
  return function checkPath(ctx: Ctx, next) {
    try {
      decodeURIComponent(ctx.path);
    } catch {
      return Promise.reject(errors.invalidRequest(`the URL path has a malformed percent-escape: ${ctx.path.slice(0, 200)}`));
    }
    return next();
  };
}
