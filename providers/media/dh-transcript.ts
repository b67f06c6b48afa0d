import { z } from 'zod';
import type { MediaProvider, ProviderOutcome } from './types';
import { parseUpstream } from './ark-schemas';
import { UpstreamHttpError } from './http';

/**
 * Transcript extraction, synchronous: POST {base}/dh/v1/transcripts
 * {url, language?} -> {text, language, duration_seconds, segments}. The
 * vendor blocks about 55 s (spec 2 section 8), so the hop allows 120 s.
 */
export const TRANSCRIPT_TIMEOUT_MS = 120_000;

const Transcript = z.looseObject({
  text: z.string(),
  language: z.string(),
  duration_seconds: z.number().nonnegative(),
  segments: z.array(z.looseObject({ start: z.number(), end: z.number(), text: z.string() })).default([]),
});
const DhError = z.looseObject({ error: z.looseObject({ code: z.string().optional(), message: z.string().optional() }) });

/** A 4xx (bad link, no speech) or 504 (extraction timed out): this request fails, charged nothing; no other channel is tried. */
function refused(err: UpstreamHttpError): ProviderOutcome {
  let body: unknown = null;
  try {
    body = JSON.parse(err.body);
  } catch {
    /* not JSON */
  }
  const e = DhError.safeParse(body);
  const code = (e.success && e.data.error.code) || (err.status === 504 ? 'timeout' : 'invalid_request');
  const message = (e.success && e.data.error.message) || `transcript extraction failed (HTTP ${err.status})`;
  return { state: err.status === 504 ? 'expired' : 'failed', units: 0, urls: [], expiresAt: null, errorCode: code, errorMessage: message, clientStatus: err.status };
}

export const dhTranscript: MediaProvider = {
  name: 'dh-transcript',
  async submit({ channel, task, http, apiKey }) {
    const { url, language } = task.input;
    let json: unknown;
    try {
      const r = await http.json('POST', `${channel.base_url}/dh/v1/transcripts`, {
        headers: { authorization: `Bearer ${apiKey}` },
        body: { url, ...(typeof language === 'string' ? { language } : {}) },
        timeoutMs: TRANSCRIPT_TIMEOUT_MS,
      });
      json = r.json;
    } catch (err) {
      if (err instanceof UpstreamHttpError && ((err.status >= 400 && err.status < 500 && err.status !== 429) || err.status === 504)) {
        return { kind: 'done', outcome: refused(err) };
      }
      throw err;
    }
    const t = parseUpstream(Transcript, json, 'transcript');
    return {
      kind: 'done',
      outcome: {
        state: 'succeeded', units: 1, urls: [], expiresAt: null,
        extra: { text: t.text, language: t.language, duration_seconds: t.duration_seconds, segments: t.segments },
      },
    };
  },
};
