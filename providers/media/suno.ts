import { z } from 'zod';
import type { Channel } from '../../domain/catalogue';
import type { MediaProvider, PollResult, ProviderOutcome } from './types';
import { parseUpstream } from './ark-schemas';
import { UpstreamHttpError, type MediaHttp } from './http';
import { ownLinkExpiry } from './minimax-common';

/**
 * Suno music behind a task proxy: POST {base}/suno/submit/music -> {code, data: taskId};
 * GET {base}/suno/fetch/{id} -> {code, data: {status, progress "45%", fail_reason, data: [clips]}}.
 * A request makes 2 songs; a song counts once its audio is complete.
 */
const SUBMIT_TIMEOUT_MS = 60_000;
const POLL_TIMEOUT_MS = 15_000;

/** Public model id -> Suno `mv`. Ids already in `chirp-*` form pass unchanged. */
export const SUNO_MV: Record<string, string> = {
  'suno-v3-5': 'chirp-v3-5',
  'suno-v4': 'chirp-v4',
  'suno-v4-5': 'chirp-auk',
  'suno-v5': 'chirp-crow',
};

const Submitted = z.looseObject({ code: z.string(), message: z.string().nullish(), data: z.string().min(1) });

export const SunoClip = z.looseObject({
  id: z.string(),
  title: z.string().nullish(),
  status: z.string().nullish(),
  audio_url: z.string().nullish(),
  image_url: z.string().nullish(),
  image_large_url: z.string().nullish(),
  video_url: z.string().nullish(),
  model_name: z.string().nullish(),
  duration: z.number().nullish(),
  tags: z.string().nullish(),
  created_at: z.string().nullish(),
  metadata: z.looseObject({ prompt: z.string().nullish(), tags: z.string().nullish(), duration: z.number().nullish() }).nullish(),
});
export type SunoClip = z.infer<typeof SunoClip>;

export const SunoTask = z.looseObject({
  task_id: z.string(),
  status: z.enum(['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE']),
  fail_reason: z.string().nullish(),
  progress: z.string().nullish(),
  data: z.array(SunoClip).nullish(),
});
export type SunoTask = z.infer<typeof SunoTask>;
const Fetched = z.looseObject({ code: z.string(), message: z.string().nullish(), data: SunoTask });
const FetchedMany = z.looseObject({ code: z.string(), data: z.array(SunoTask) });

/** The song fields the gateway shows (docs/media/music.md). */
export function songView(c: SunoClip) {
  return {
    id: c.id,
    title: c.title ?? '',
    audio_url: c.audio_url || null,
    image_url: c.image_url || null,
    image_large_url: c.image_large_url || null,
    video_url: c.video_url || null,
    duration: c.duration ?? c.metadata?.duration ?? null,
    tags: c.tags ?? c.metadata?.tags ?? '',
    lyrics: c.metadata?.prompt ?? '',
    model_name: c.model_name ?? null,
    created_at: c.created_at ?? null,
  };
}
export type SongView = ReturnType<typeof songView>;

const complete = (c: SunoClip) => c.status === 'complete' && !!c.audio_url;

function finished(t: SunoTask): ProviderOutcome {
  if (t.status === 'SUCCESS') {
    const songs = (t.data ?? []).filter(complete).map(songView);
    if (songs.length === 0) return { state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: 'no_output', errorMessage: 'the upstream finished without a song' };
    const urls = songs.map((s) => s.audio_url!);
    return { state: 'succeeded', units: songs.length, urls, expiresAt: ownLinkExpiry(urls), extra: { songs } };
  }
  const reason = t.fail_reason || 'music generation failed';
  const expired = /expired|timeout|timed out/i.test(reason);
  return { state: expired ? 'expired' : 'failed', units: 0, urls: [], expiresAt: null, errorCode: expired ? 'task_expired' : 'generation_failed', errorMessage: reason };
}

function progressOf(p: string | null | undefined): number | null {
  const m = p ? /^(\d{1,3})%?$/.exec(p.trim()) : null;
  return m ? Math.min(100, Number(m[1])) : null;
}

/** A 4xx refusal ({code: error, message}): not charged, no other channel. */
function refused(err: UpstreamHttpError): ProviderOutcome {
  let message = `the upstream refused the request (HTTP ${err.status})`;
  try {
    const b = JSON.parse(err.body) as { message?: unknown };
    if (typeof b.message === 'string' && b.message) message = b.message;
  } catch {
    /* not JSON */
  }
  return { state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: 'invalid_request', errorMessage: message, clientStatus: err.status };
}

/** POST {base}/suno/fetch {ids}: the tasks as the upstream reports them now (fresh links, lyrics). */
export async function sunoFetch(http: MediaHttp, channel: Channel, apiKey: string, ids: string[]): Promise<SunoTask[]> {
  const r = await http.json('POST', `${channel.base_url}/suno/fetch`, { headers: { authorization: `Bearer ${apiKey}` }, body: { ids }, timeoutMs: POLL_TIMEOUT_MS });
  return parseUpstream(FetchedMany, r.json, 'suno fetch').data;
}

export const suno: MediaProvider = {
  name: 'suno',
  async submit({ channel, task, http, apiKey, upstreamModel }) {
    const { prompt, gpt_description_prompt, title, tags, negative_tags, make_instrumental } = task.input;
    const body = {
      mv: SUNO_MV[upstreamModel] ?? upstreamModel,
      prompt: prompt ?? '',
      ...(gpt_description_prompt !== undefined ? { gpt_description_prompt } : {}),
      ...(title !== undefined ? { title } : {}),
      ...(tags !== undefined ? { tags } : {}),
      ...(negative_tags !== undefined ? { negative_tags } : {}),
      make_instrumental: make_instrumental === true,
    };
    try {
      const r = await http.json('POST', `${channel.base_url}/suno/submit/music`, { headers: { authorization: `Bearer ${apiKey}` }, body, timeoutMs: SUBMIT_TIMEOUT_MS });
      const s = parseUpstream(Submitted, r.json, 'suno submit');
      if (s.code !== 'success') throw new UpstreamHttpError(502, `suno submit: ${s.message ?? s.code}`, 'application/json');
      return { kind: 'task', upstreamTaskId: s.data };
    } catch (err) {
      if (err instanceof UpstreamHttpError && err.status >= 400 && err.status < 500 && err.status !== 429) return { kind: 'done', outcome: refused(err) };
      throw err;
    }
  },
  async poll({ channel, http, apiKey }, id): Promise<PollResult> {
    const r = await http.json('GET', `${channel.base_url}/suno/fetch/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${apiKey}` }, timeoutMs: POLL_TIMEOUT_MS });
    const t = parseUpstream(Fetched, r.json, 'suno fetch').data;
    const progress = progressOf(t.progress);
    if (t.status === 'NOT_START' || t.status === 'SUBMITTED' || t.status === 'QUEUED') return { state: 'queued', progress };
    if (t.status === 'IN_PROGRESS') return { state: 'running', progress };
    const outcome = finished(t);
    return { state: outcome.state, outcome };
  },
};
