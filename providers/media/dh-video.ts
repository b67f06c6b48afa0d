import type { MediaProvider, PollResult, ProviderOutcome } from './types';
import { linkExpiry } from './images-common';
import { parseUpstream } from './ark-schemas';
import { DhSubmitResponse, DhTask } from './dh-video-schemas';
import { UpstreamHttpError } from './http';

/**
 * Digital-human video, lip-sync, motion transfer and clip editing on the
 * digital-human task API: POST {base}/dh/v1/tasks {kind, model, ...input} ->
 * {task_id}; GET {base}/dh/v1/tasks/{id}. The task input already holds `kind`
 * and the upstream field names (capabilities/media/video-dh-request.ts).
 */
export const DH_SUBMIT_TIMEOUT_MS = 60_000;
const POLL_TIMEOUT_MS = 15_000;
/** Gateway-only input key: the one channel the task may run on (an avatar created there); never sent upstream. */
export const PIN_CHANNEL_KEY = 'pin_channel';

function finished(t: DhTask, nowMs: number): ProviderOutcome {
  if (t.status === 'succeeded') {
    const video = t.result?.video_url;
    const seconds = Math.ceil(t.result?.duration_seconds ?? 0);
    if (!video || seconds <= 0) {
      return { state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: 'no_output', errorMessage: 'the upstream finished without a video' };
    }
    return {
      state: 'succeeded', units: seconds, urls: [video], expiresAt: linkExpiry([video], nowMs),
      extra: { video_url: video, duration: t.result?.duration_seconds ?? seconds, cover_url: t.result?.cover_url ?? null, upstream_updated_at: t.updated_at ?? null },
    };
  }
  const state = t.status as 'failed' | 'expired' | 'cancelled';
  const code = state === 'expired' ? 'task_expired' : state === 'cancelled' ? 'task_cancelled' : 'generation_failed';
  return { state, units: 0, urls: [], expiresAt: null, errorCode: code, errorMessage: t.error?.message ?? `the task ended ${state}` };
}

export const dhVideo: MediaProvider = {
  name: 'dh-video',
  async submit({ channel, task, http, apiKey, upstreamModel }) {
    const { [PIN_CHANNEL_KEY]: pinned, ...input } = task.input;
    // A vendor's avatars belong to the account they were created on: other channels are skipped as unavailable.
    if (typeof pinned === 'string' && pinned !== channel.id) throw new UpstreamHttpError(503, `the avatar lives on channel ${pinned}, not ${channel.id}`, undefined);
    const r = await http.json('POST', `${channel.base_url}/dh/v1/tasks`, {
      headers: { authorization: `Bearer ${apiKey}` },
      body: { ...input, model: upstreamModel },
      timeoutMs: DH_SUBMIT_TIMEOUT_MS,
    });
    return { kind: 'task', upstreamTaskId: parseUpstream(DhSubmitResponse, r.json, 'dh submit').task_id };
  },
  async poll({ channel, http, apiKey }, id): Promise<PollResult> {
    const r = await http.json('GET', `${channel.base_url}/dh/v1/tasks/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      timeoutMs: POLL_TIMEOUT_MS,
    });
    const t = parseUpstream(DhTask, r.json, 'dh poll');
    // Spec 2 section 2.1: `progress` is shown only for the one video tier that reports it, so none here.
    if (t.status === 'pending') return { state: 'queued' };
    if (t.status === 'processing') return { state: 'running' };
    return { state: t.status, outcome: finished(t, Date.now()) };
  },
};
