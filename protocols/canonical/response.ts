import type { NormalizedUsage } from '../usage/normalized';

/** Why generation stopped, in chat-completions terms plus `stop_sequence`. */
export type FinishReason = 'stop' | 'stop_sequence' | 'length' | 'tool_calls' | 'content_filter';

export type ResponseBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string };

export interface CanonicalChoice {
  content: ResponseBlock[];
  finish: FinishReason;
  /** The stop sequence that matched, when the upstream says. */
  stopSequence?: string | null;
}

/** A complete, non-streamed chat result, protocol-neutral. */
export interface CanonicalResponse {
  id: string;
  model: string;
  created?: number;
  choices: CanonicalChoice[];
  usage: NormalizedUsage;
}
