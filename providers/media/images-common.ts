import { z } from 'zod';
import type { ProviderCall, ProviderOutcome } from './types';
import { UpstreamHttpError } from './http';
import { keepBody } from './images-files';
import { mediaErrorJson } from '../../domain/error-bodies';
import { parseUrl } from '../../domain/url-policy';

/** The OpenAI Images body our image families answer with (upstream shape, passed through; unknown fields kept). */
export const ImagesBody = z.looseObject({
  created: z.number().optional(),
  model: z.string().optional(),
  expires_at: z.number().optional(),
  data: z.array(z.looseObject({ url: z.string().optional(), b64_json: z.string().optional(), size: z.string().optional(), revised_prompt: z.string().optional() })).optional(),
  usage: z.record(z.string(), z.unknown()).optional(),
});
export type ImagesBody = z.infer<typeof ImagesBody>;

/** A 2xx body that is not what the vendor documents is an upstream fault (5xx: the next channel may do better). */
export function parseUpstream<S extends z.ZodType>(schema: S, json: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new UpstreamHttpError(502, `${what}: unexpected upstream body (${issue.path.join('.') || 'body'}: ${issue.message})`, 'application/json');
  }
  return r.data;
}

/** Hosted links carry their expiry (`?expires=<unix s>`); otherwise they last 24 h from now. */
export function linkExpiry(urls: string[], nowMs: number): number | null {
  if (urls.length === 0) return null;
  let min = Infinity;
  for (const u of urls) {
    // A link that is not a URL we can read gets the default lifetime.
    const e = Number(parseUrl(u)?.searchParams.get('expires'));
    if (Number.isFinite(e) && e > 0) min = Math.min(min, e * 1000);
  }
  return Number.isFinite(min) ? min : nowMs + 24 * 3600 * 1000;
}

/** A succeeded images call: count what came back, keep the body as the client answer. */
export function imagesOutcome(body: ImagesBody, model: string, nowMs: number): ProviderOutcome {
  const data = body.data ?? [];
  const urls = data.map((d) => d.url).filter((u): u is string => typeof u === 'string');
  const expiresAt = linkExpiry(urls, nowMs);
  const client: ImagesBody = { ...body, model: body.model ?? model };
  if (expiresAt !== null && urls.length) client.expires_at = Math.floor(expiresAt / 1000);
  return {
    state: data.length > 0 ? 'succeeded' : 'failed',
    units: data.length,
    urls,
    expiresAt,
    clientBody: JSON.stringify(client),
    clientStatus: 200,
    ...(data.length === 0 ? { errorCode: 'no_output', errorMessage: 'the upstream returned no image' } : {}),
  };
}

/** The outcome with a large client body (b64_json) stored aside, so Temporal payloads and task documents stay small. */
export async function keptOutcome(call: ProviderCall, outcome: ProviderOutcome): Promise<ProviderOutcome> {
  return outcome.clientBody === undefined ? outcome : { ...outcome, clientBody: await keepBody(call, outcome.clientBody) };
}

/** An async image task that ended without images, in the OpenAI error shape. */
export function failedImages(state: 'failed' | 'expired', code: string, message: string): ProviderOutcome {
  return {
    state, units: 0, urls: [], expiresAt: null, errorCode: code, errorMessage: message,
    clientStatus: state === 'expired' ? 504 : 500,
    clientBody: mediaErrorJson(code, message, 'upstream_error'),
  };
}
