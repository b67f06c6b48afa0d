import { upstreamUrl } from '../platform/upstream';
import type { ChatProvider } from './types';

/** Google-style generateContent: the model is in the path; streams use alt=sse. */
export const gemini: ChatProvider = {
  protocol: 'generate-content',
  call(channel, { model, stream, apiKey }) {
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return {
      url: upstreamUrl(`${channel.base_url}/v1beta/models/${encodeURIComponent(model)}:${method}`),
      headers: { 'x-goog-api-key': apiKey, 'content-type': 'application/json' },
    };
  },
};
