import type { MediaProvider, PollResult } from './types';
import { imagesOutcome, type ImagesBody } from './images-common';

/** Image task API: POST {base}/v1/images/tasks -> {id}; GET {base}/v1/images/tasks/{id}. */
interface ImageTask extends ImagesBody {
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'expired';
  error?: { code?: string; message?: string };
}

export const imageTasks: MediaProvider = {
  name: 'image-tasks',
  submitTimeoutMs: 60_000,
  async submit({ channel, task, http, apiKey, upstreamModel }) {
    const { async: _async, ...body } = task.input as Record<string, unknown>;
    const r = await http.json<ImageTask>('POST', `${channel.base_url}/v1/images/tasks`, {
      headers: { authorization: `Bearer ${apiKey}` },
      body: { ...body, model: upstreamModel, endpoint: task.endpoint === 'edits' ? 'edits' : 'generations' },
      timeoutMs: 60_000,
    });
    return { kind: 'task', upstreamTaskId: r.json.id };
  },
  async poll({ channel, task, http, apiKey }, id): Promise<PollResult> {
    const r = await http.json<ImageTask>('GET', `${channel.base_url}/v1/images/tasks/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      timeoutMs: 30_000,
    });
    const t = r.json;
    if (t.status === 'queued' || t.status === 'running') return { state: t.status };
    if (t.status === 'succeeded') return { state: 'succeeded', outcome: imagesOutcome(t, task.model, Date.now()) };
    const errorCode = t.error?.code ?? (t.status === 'expired' ? 'task_expired' : 'generation_failed');
    const message = t.error?.message ?? `image task ${t.status}`;
    return {
      state: t.status,
      outcome: {
        state: t.status, units: 0, urls: [], expiresAt: null, errorCode, errorMessage: message,
        clientStatus: 500,
        clientBody: JSON.stringify({ error: { code: errorCode, message, param: null, type: 'upstream_error' } }),
      },
    };
  },
};
