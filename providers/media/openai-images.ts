import type { MediaProvider } from './types';
import { ImagesBody, imagesOutcome, keptOutcome, parseUpstream } from './images-common';
import { resolveInput } from './images-files';

/** OpenAI-style Images API, synchronous: POST {base}/v1/images/generations | edits. */
export const IMAGE_SYNC_HOP_TIMEOUT_MS = 240_000;

export const openaiImages: MediaProvider = {
  name: 'openai-images',
  async submit(call) {
    const { channel, task, http, apiKey, upstreamModel } = call;
    const path = task.endpoint === 'edits' ? 'edits' : 'generations';
    const { async: _async, ...body } = await resolveInput(call, task.input);
    const r = await http.json('POST', `${channel.base_url}/v1/images/${path}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      body: { ...body, model: upstreamModel },
      timeoutMs: IMAGE_SYNC_HOP_TIMEOUT_MS,
    });
    const images = parseUpstream(ImagesBody, r.json, 'images');
    return { kind: 'done', outcome: await keptOutcome(call, imagesOutcome(images, task.model, Date.now())) };
  },
};
