import type { MediaProvider } from './types';
import { imagesOutcome, type ImagesBody } from './images-common';

/** OpenAI-style Images API, synchronous: POST {base}/v1/images/generations | edits. */
export const IMAGE_SYNC_HOP_TIMEOUT_MS = 240_000;

export const openaiImages: MediaProvider = {
  name: 'openai-images',
  submitTimeoutMs: IMAGE_SYNC_HOP_TIMEOUT_MS,
  async submit({ channel, task, http, apiKey, upstreamModel }) {
    const path = task.endpoint === 'edits' ? 'edits' : 'generations';
    const { async: _async, ...body } = task.input as Record<string, unknown>;
    const r = await http.json<ImagesBody>('POST', `${channel.base_url}/v1/images/${path}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      body: { ...body, model: upstreamModel },
      timeoutMs: IMAGE_SYNC_HOP_TIMEOUT_MS,
    });
    return { kind: 'done', outcome: imagesOutcome(r.json, task.model, Date.now()) };
  },
};
