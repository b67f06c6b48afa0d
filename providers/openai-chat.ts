import { upstreamUrl } from '../platform/upstream';
import type { ChatProvider } from './types';

/** OpenAI-style chat completions: POST {base}/v1/chat/completions, Bearer key. */
export const openaiChat: ChatProvider = {
  protocol: 'chat-completions',
  call(channel, { apiKey }) {
    return {
      url: upstreamUrl(`${channel.base_url}/v1/chat/completions`),
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    };
  },
};
