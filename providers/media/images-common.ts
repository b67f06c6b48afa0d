import type { ProviderOutcome } from './types';

/** The OpenAI Images body our image families answer with (upstream shape, passed through). */
export interface ImagesBody {
  created?: number;
  model?: string;
  expires_at?: number;
  data?: Array<{ url?: string; b64_json?: string; size?: string; revised_prompt?: string }>;
  usage?: Record<string, unknown>;
}

/** Hosted links carry their expiry (`?expires=<unix s>`); otherwise they last 24 h from now. */
export function linkExpiry(urls: string[], nowMs: number): number | null {
  if (urls.length === 0) return null;
  let min = Infinity;
  for (const u of urls) {
    const e = Number(new URL(u).searchParams.get('expires'));
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
