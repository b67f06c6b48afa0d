import { z } from 'zod';
import type { ProviderOutcome } from './types';
import { UpstreamHttpError } from './http';
import { parseUrl } from '../../domain/url-policy';

/**
 * MiniMax conventions shared by T2A and voice cloning. MiniMax answers
 * errors with HTTP 200 and a non-zero `base_resp.status_code`.
 */
export const BaseResp = z.looseObject({ status_code: z.number().int(), status_msg: z.string().nullish() });
export type BaseResp = z.infer<typeof BaseResp>;

/** Public speech model id -> MiniMax model. Ids not listed pass unchanged. */
export const MINIMAX_MODEL: Record<string, string> = {
  'speech-2-5-hd': 'speech-2.5-hd-preview',
  'speech-2-5-turbo': 'speech-2.5-turbo-preview',
  'speech-02-hd': 'speech-02-hd',
  'speech-02-turbo': 'speech-02-turbo',
};
export const minimaxModel = (id: string) => MINIMAX_MODEL[id] ?? id;

/** Codes that are the request's own fault: the task fails (not charged) and no other channel is tried. */
const CLIENT_CODES: Record<number, string> = {
  2013: 'invalid_params',
  2054: 'voice_not_found',
  2039: 'voice_id_duplicate',
  2038: 'voice_clone_not_allowed',
  2049: 'invalid_api_key',
  1026: 'input_sensitive',
  1027: 'output_sensitive',
  1042: 'invisible_characters',
  1043: 'voice_clone_audio_invalid',
};
/** Rate limits: the request fails with 429. */
const RATE_CODES = new Set([1002, 1039, 1041]);

/**
 * Read `base_resp`: null when it is a success. A client fault becomes a
 * failed outcome (400); a rate limit a thrown 429; anything else (1000
 * unknown error, 1001 timeout, 1004 auth, 1008 balance, ...) a thrown 502,
 * so the channel ladder moves to the next channel.
 */
export function baseRespFailure(json: unknown, what: string): ProviderOutcome | null {
  const parsed = z.looseObject({ base_resp: BaseResp.nullish() }).safeParse(json);
  const base = parsed.success ? parsed.data.base_resp : null;
  if (!base) throw new UpstreamHttpError(502, `${what}: upstream body without base_resp`, 'application/json');
  if (base.status_code === 0) return null;
  const message = base.status_msg || `MiniMax error ${base.status_code}`;
  const code = CLIENT_CODES[base.status_code];
  if (code) return { state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: code, errorMessage: message, clientStatus: 400 };
  const body = JSON.stringify({ base_resp: base });
  if (RATE_CODES.has(base.status_code)) throw new UpstreamHttpError(429, body, 'application/json');
  throw new UpstreamHttpError(base.status_code === 1001 ? 504 : 502, body, 'application/json');
}

/**
 * When links that carry their own expiry stop working: the earliest
 * `expires=` (Unix s) or `Expires=` (object-store signature) among them;
 * null when none carries one (long-lived).
 */
export function ownLinkExpiry(urls: string[]): number | null {
  let min = Infinity;
  for (const u of urls) {
    const params = parseUrl(u)?.searchParams;
    if (!params) continue;
    const e = Number(params.get('expires') ?? params.get('Expires'));
    if (Number.isFinite(e) && e > 0) min = Math.min(min, e * 1000);
  }
  return Number.isFinite(min) ? min : null;
}
