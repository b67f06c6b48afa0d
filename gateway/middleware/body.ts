import { errors, GatewayError } from '../../domain/errors';
import type { Ctx, Middleware } from '../context';

/** Read the raw body (kept for byte forwarding) and parse it as JSON. */
export function jsonBody(limitBytes: number): Middleware {
  return async function readJson(ctx: Ctx, next) {
    const raw = await readRaw(ctx, limitBytes);
    ctx.state.rawBody = raw;
    if (raw.length === 0) throw errors.invalidRequest('request body must be a JSON object');
    try {
      ctx.state.body = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      throw errors.invalidRequest(`request body is not valid JSON: ${(err as Error).message}`);
    }
    if (typeof ctx.state.body !== 'object' || ctx.state.body === null || Array.isArray(ctx.state.body)) {
      throw errors.invalidRequest('request body must be a JSON object');
    }
    await next();
  };
}

export async function readRaw(ctx: Ctx, limitBytes: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limitBytes) throw tooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge(limitBytes);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

function tooLarge(limit: number) {
  return new GatewayError('invalid_request', `request body exceeds ${Math.round(limit / 1024 / 1024)} MB`, { status: 413 });
}
