/**
 * chat-completions response shapes as read from an upstream (every field
 * optional: upstream JSON is not trusted to be complete).
 */

export interface ChatWireToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletion {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  choices?: Array<{
    index?: number;
    message?: {
      role?: string;
      content?: string | null | Array<{ type?: string; text?: string }>;
      tool_calls?: ChatWireToolCall[] | null;
      refusal?: string | null;
    };
    finish_reason?: string | null;
  }>;
  usage?: unknown;
}

export interface ChatChunk {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  choices?: Array<{
    index?: number;
    delta?: { role?: string; content?: string | null; tool_calls?: ChatWireToolCall[] | null; refusal?: string | null };
    finish_reason?: string | null;
  }> | null;
  usage?: unknown;
  error?: unknown;
}
