import type { Channel } from '../domain/catalogue';
import type { UpstreamUrl } from '../platform/upstream';

/** Where and how to send one chat request to one channel. */
export interface UpstreamCall {
  url: UpstreamUrl;
  headers: Record<string, string>;
}

export interface ChatProvider {
  /** The upstream wire protocol this adapter speaks. */
  protocol: 'chat-completions' | 'messages' | 'responses' | 'generate-content';
  call(channel: Channel, opts: { model: string; stream: boolean; apiKey: string; clientHeaders: Record<string, string | undefined> }): UpstreamCall;
}
