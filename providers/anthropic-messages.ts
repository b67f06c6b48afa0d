import { upstreamUrl } from '../platform/upstream';
import type { ChatProvider } from './types';

export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic-style messages: POST {base}/v1/messages, x-api-key and the version header. */
export const anthropicMessages: ChatProvider = {
  protocol: 'messages',
  call(channel, { apiKey, clientHeaders }) {
    const headers: Record<string, string> = {
      'x-api-key': apiKey,
      'anthropic-version': clientHeaders['anthropic-version'] || DEFAULT_ANTHROPIC_VERSION,
      'content-type': 'application/json',
    };
    if (clientHeaders['anthropic-beta']) headers['anthropic-beta'] = clientHeaders['anthropic-beta'];
    return { url: upstreamUrl(`${channel.base_url}/v1/messages`), headers };
  },
};
