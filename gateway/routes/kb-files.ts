import Router from '@koa/router';
import { GatewayError } from '../../domain/errors';
import type { PlatformDeps } from '../../capabilities/deps';
import type { KnowledgeDeps } from '../../capabilities/knowledge/deps';
import type { GatewayState } from '../context';
import { keyOfLinkPath, SOURCE_FILES_PATH } from '../../capabilities/knowledge/storage/source-links';

/**
 * The signed source links of spec 3 section 2.4 (`GET /kb/files/{r2_key}?expires=&sig=`).
 * The signature is the credential: no key is needed, and an expired or
 * altered link gets a 403 in the chat-completions error shape, never data.
 *
 * The file is the uploader's, in the type it was uploaded as (HTML among them), served
 * from the gateway's own origin: it is a download (`attachment`), the browser may not
 * guess another type (`nosniff`), and were it rendered anyway it runs nothing and
 * loads nothing (`default-src 'none'; sandbox`).
 */
const FILE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
} as const;

export function kbFileRoutes(deps: PlatformDeps & KnowledgeDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.get(`${SOURCE_FILES_PATH}*key`, async (ctx) => {
    const q = ctx.query;
    const one = (v: string | string[] | undefined) => (typeof v === 'string' ? v : undefined);
    const verdict = deps.sourceLinks.check(ctx.path, one(q.expires), one(q.sig));
    if (verdict === 'expired') throw new GatewayError('permission_denied', 'this source link has expired; ask for a new one (links are valid for 1 hour)', { type: 'permission_error' });
    if (verdict !== 'ok') throw new GatewayError('permission_denied', 'this source link is not valid (its signature does not match)', { type: 'permission_error' });
    const file = await deps.kbFiles.get(keyOfLinkPath(ctx.path));
    if (!file) throw new GatewayError('not_found', 'the source file no longer exists', { status: 404, type: 'invalid_request_error' });
    ctx.set('content-type', file.contentType);
    ctx.set('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`);
    ctx.set('cache-control', 'private, max-age=0, no-store');
    ctx.set(FILE_HEADERS);
    ctx.body = file.data;
  });
  return router;
}
