import type { MediaProvider, PollResult, ProviderOutcome } from './types';
import { linkExpiry } from './images-common';
import { ArkSubmitResponse, ArkTask, parseUpstream } from './ark-schemas';

/**
 * Volcengine Ark content generation (Seedance-style video):
 * POST {base}/api/v3/contents/generations/tasks -> {id};
 * GET  {base}/api/v3/contents/generations/tasks/{id}.
 * The submission has 60 s (spec 2 section 8); links are valid 24 h.
 */
export const VIDEO_SUBMIT_TIMEOUT_MS = 60_000;
const POLL_TIMEOUT_MS = 15_000;
const TASKS_PATH = '/api/v3/contents/generations/tasks';

/** Gateway-only fields that never go upstream (`portrait_auth` is an audit record). */
const GATEWAY_ONLY = new Set(['portrait_auth', 'model']);

function finished(t: ArkTask, nowMs: number): ProviderOutcome {
  if (t.status === 'succeeded') {
    const video = t.content?.video_url;
    const seconds = Math.ceil(t.duration ?? 0);
    if (!video || seconds <= 0) {
      return { state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: 'no_output', errorMessage: 'the upstream finished without a video' };
    }
    return {
      state: 'succeeded', units: seconds, urls: [video], expiresAt: linkExpiry([video], nowMs),
      extra: {
        video_url: video, last_frame_url: t.content?.last_frame_url ?? null, duration: t.duration ?? seconds,
        ratio: t.ratio ?? null, resolution: t.resolution ?? null, seed: t.seed ?? null, framespersecond: t.framespersecond ?? null,
        generate_audio: t.generate_audio ?? null, usage: t.usage ?? null, upstream_updated_at: t.updated_at ?? null,
        // Only the progress tier reports it; kept so a task that finished at its first poll still shows it.
        ...(typeof t.progress === 'number' ? { progress: t.progress } : {}),
      },
    };
  }
  const state = t.status as 'failed' | 'expired' | 'cancelled';
  const code = state === 'expired' ? 'task_expired' : state === 'cancelled' ? 'task_cancelled' : 'generation_failed';
  const message = t.error?.message ?? `the video task ended ${state}`;
  return { state, units: 0, urls: [], expiresAt: null, errorCode: code, errorMessage: t.error?.code ? `${t.error.code}: ${message}` : message };
}

export const arkVideo: MediaProvider = {
  name: 'ark-video',
  async submit({ channel, task, http, apiKey, upstreamModel }) {
    const body = Object.fromEntries(Object.entries(task.input).filter(([k]) => !GATEWAY_ONLY.has(k)));
    const r = await http.json('POST', `${channel.base_url}${TASKS_PATH}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      body: { model: upstreamModel, ...body },
      timeoutMs: VIDEO_SUBMIT_TIMEOUT_MS,
    });
    return { kind: 'task', upstreamTaskId: parseUpstream(ArkSubmitResponse, r.json, 'ark submit').id };
  },
  async poll({ channel, http, apiKey }, id): Promise<PollResult> {
    const r = await http.json('GET', `${channel.base_url}${TASKS_PATH}/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      timeoutMs: POLL_TIMEOUT_MS,
    });
    const t = parseUpstream(ArkTask, r.json, 'ark poll');
    const progress = typeof t.progress === 'number' ? Math.max(0, Math.min(100, Math.round(t.progress))) : null;
    if (t.status === 'queued' || t.status === 'running') return { state: t.status, progress };
    return { state: t.status, progress, outcome: finished(t, Date.now()) };
  },
};
