import { z } from 'zod';
import type { MediaProvider, PollResult } from './types';
import { ImagesBody, failedImages, imagesOutcome, keptOutcome, parseUpstream } from './images-common';
import { resolveInput } from './images-files';

/** Image task API: POST {base}/v1/images/tasks -> {id}; GET {base}/v1/images/tasks/{id}. */
/** A poll fits in the workflow's 20 s poll activity. */
const POLL_TIMEOUT_MS = 15_000;

const Submitted = z.looseObject({ id: z.string().min(1) });
const ImageTask = ImagesBody.extend({
  id: z.string(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'expired']),
  error: z.looseObject({ code: z.string().optional(), message: z.string().optional() }).nullish(),
});

export const imageTasks: MediaProvider = {
  name: 'image-tasks',
  async submit(call) {
    const { channel, task, http, apiKey, upstreamModel } = call;
    const { async: _async, ...body } = await resolveInput(call, task.input);
    const r = await http.json('POST', `${channel.base_url}/v1/images/tasks`, {
      headers: { authorization: `Bearer ${apiKey}` },
      body: { ...body, model: upstreamModel, endpoint: task.endpoint === 'edits' ? 'edits' : 'generations' },
      timeoutMs: 60_000,
    });
    return { kind: 'task', upstreamTaskId: parseUpstream(Submitted, r.json, 'image task submit').id };
  },
  async poll(call, id): Promise<PollResult> {
    const { channel, task, http, apiKey } = call;
    const r = await http.json('GET', `${channel.base_url}/v1/images/tasks/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      timeoutMs: POLL_TIMEOUT_MS,
    });
    const t = parseUpstream(ImageTask, r.json, 'image task');
    if (t.status === 'queued' || t.status === 'running') return { state: t.status };
    if (t.status === 'succeeded') {
      // The client sees the Images API body only: the upstream's task fields (its id, status, times) stay here.
      const created = typeof t.completed_at === 'number' ? t.completed_at : Math.floor(Date.now() / 1000);
      const images: ImagesBody = { created, model: t.model, data: t.data, usage: t.usage };
      return { state: 'succeeded', outcome: await keptOutcome(call, imagesOutcome(images, task.model, Date.now())) };
    }
    const code = t.error?.code ?? (t.status === 'expired' ? 'task_expired' : 'generation_failed');
    return { state: t.status, outcome: failedImages(t.status, code, t.error?.message ?? `image task ${t.status}`) };
  },
};
