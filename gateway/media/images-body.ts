import { jsonBody } from '../middleware/body';
import type { Ctx, Middleware } from '../context';
import { isMultipart, readMultipart } from './multipart';
import { canonicalForm, formToImagesBody } from './images-form';

/**
 * Images bodies: JSON everywhere; edits also take multipart/form-data (spec 2
 * section 4.3). Either way the handler sees one JSON-shaped body, and the
 * idempotency check a digest of its content.
 */
export function imagesBody(limitBytes: number, opts: { multipart: boolean }): Middleware {
  const json = jsonBody(limitBytes);
  return async function readImagesBody(ctx: Ctx, next) {
    if (!opts.multipart || !isMultipart(ctx)) return json(ctx, next);
    const parts = await readMultipart(ctx, limitBytes);
    ctx.state.body = formToImagesBody(parts);
    ctx.state.rawBody = canonicalForm(parts);
    await next();
  };
}
