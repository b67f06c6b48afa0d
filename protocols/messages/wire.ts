/** messages response and stream shapes as read from an upstream (every field optional). */

export interface MessagesWireBlock {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

export interface MessagesResponse {
  id?: string;
  type?: string;
  role?: string;
  model?: string;
  content?: MessagesWireBlock[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: unknown;
}

export interface MessagesStreamEvent {
  type?: string;
  message?: MessagesResponse;
  index?: number;
  content_block?: MessagesWireBlock;
  delta?: { type?: string; text?: string; partial_json?: string; thinking?: string; stop_reason?: string | null; stop_sequence?: string | null };
  usage?: Record<string, unknown>;
  error?: unknown;
}
