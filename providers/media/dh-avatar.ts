import { z } from 'zod';
import type { MediaProvider, PollResult, ProviderOutcome } from './types';
import { parseUpstream } from './ark-schemas';
import { DhSubmitResponse, DhTask } from './dh-video-schemas';
import { UpstreamHttpError } from './http';

/**
 * Avatar creation on the digital-human task API: POST {base}/dh/v1/tasks
 * {kind: avatar_create, model, name, source_url, source_kind} -> {task_id};
 * GET {base}/dh/v1/tasks/{id} until `succeeded` with `result.avatar_id`.
 * Creation takes minutes at a real vendor (poll cadence: domain/media/cadence.ts).
 */
const SUBMIT_TIMEOUT_MS = 60_000;
const POLL_TIMEOUT_MS = 15_000;

const AvatarResult = z.looseObject({ avatar_id: z.string().min(1).optional(), cover_url: z.string().optional() });
const DhError = z.looseObject({ error: z.looseObject({ code: z.string().optional(), message: z.string().optional() }) });

function finished(t: DhTask): ProviderOutcome {
  if (t.status === 'succeeded') {
    const r = AvatarResult.safeParse(t.result ?? {});
    const avatarId = r.success ? r.data.avatar_id : undefined;
    if (!avatarId) return { state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: 'no_output', errorMessage: 'the upstream finished without an avatar' };
    const cover = r.success ? r.data.cover_url ?? null : null;
    return { state: 'succeeded', units: 1, urls: cover ? [cover] : [], expiresAt: null, extra: { avatar_id: avatarId, cover_url: cover } };
  }
  const state = t.status as 'failed' | 'expired' | 'cancelled';
  const code = state === 'expired' ? 'task_expired' : state === 'cancelled' ? 'task_cancelled' : t.error?.code ?? 'avatar_failed';
  return { state, units: 0, urls: [], expiresAt: null, errorCode: code, errorMessage: t.error?.message ?? `avatar creation ended ${state}` };
}

/** A 4xx refusal: the request itself is wrong (another channel would refuse it too); not charged. */
function refused(err: UpstreamHttpError): ProviderOutcome {
  let body: unknown = null;
  try {
    body = JSON.parse(err.body);
  } catch {
    /* not JSON */
  }
  const e = DhError.safeParse(body);
  const message = (e.success && e.data.error.message) || `the upstream refused the avatar (HTTP ${err.status})`;
  return { state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: 'invalid_request', errorMessage: message, clientStatus: err.status };
}

export const dhAvatar: MediaProvider = {
  name: 'dh-avatar',
  async submit({ channel, task, http, apiKey, upstreamModel }) {
    const { name, source_url, source_kind } = task.input;
    try {
      const r = await http.json('POST', `${channel.base_url}/dh/v1/tasks`, {
        headers: { authorization: `Bearer ${apiKey}` },
        body: { kind: 'avatar_create', model: upstreamModel, name, source_url, source_kind },
        timeoutMs: SUBMIT_TIMEOUT_MS,
      });
      return { kind: 'task', upstreamTaskId: parseUpstream(DhSubmitResponse, r.json, 'avatar submit').task_id };
    } catch (err) {
      if (err instanceof UpstreamHttpError && err.status >= 400 && err.status < 500 && err.status !== 429) return { kind: 'done', outcome: refused(err) };
      throw err;
    }
  },
  async poll({ channel, http, apiKey }, id): Promise<PollResult> {
    const r = await http.json('GET', `${channel.base_url}/dh/v1/tasks/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      timeoutMs: POLL_TIMEOUT_MS,
    });
    const t = parseUpstream(DhTask, r.json, 'avatar poll');
    if (t.status === 'pending') return { state: 'queued' };
    if (t.status === 'processing') return { state: 'running' };
    return { state: t.status, outcome: finished(t) };
  },
};
