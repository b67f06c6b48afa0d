import { upstreamUrl } from '../platform/upstream';
import type { ChatProvider } from './types';

/** OpenAI-style responses: POST {base}/v1/responses, Bearer key. */
export const openaiResponses: ChatProvider = {
  protocol: 'responses',
  call(channel, { apiKey }) {
    return {
      url: upstreamUrl(`${channel.base_url}/v1/responses`),
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    };
  },
};
