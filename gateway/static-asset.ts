import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Context } from 'koa';

/** A static file held in memory: its bytes, gzipped once, and an ETag (the console's assets, the API reference page). */
export interface StaticAsset { type: string; body: Buffer; gz: Buffer; etag: string }

export function staticAsset(type: string, body: Buffer): StaticAsset {
  return { type, body, gz: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` };
}

/** Sends the asset: 304 when the client has it, gzipped when it accepts that. */
export function sendStaticAsset(ctx: Context, a: StaticAsset, cacheControl: string): void {
  ctx.set('cache-control', cacheControl);
  ctx.set('etag', a.etag);
  ctx.vary('accept-encoding');
  if (ctx.get('if-none-match') === a.etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = a.type;
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('content-encoding', 'gzip');
    ctx.body = a.gz;
  } else ctx.body = a.body;
}
