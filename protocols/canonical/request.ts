/**
 * The protocol-neutral chat request every translator passes through:
 * client wire -> decode -> CanonicalRequest -> encode -> upstream wire.
 * It holds what at least two of the protocols can express; a decoder drops
 * (and names) client fields with no slot here, an encoder names the
 * canonical fields its upstream cannot carry.
 */

export type MediaSource =
  | { kind: 'url'; url: string; mediaType?: string }
  | { kind: 'base64'; mediaType: string; data: string };

export interface TextBlock {
  type: 'text';
  text: string;
}
export interface ImageBlock {
  type: 'image';
  source: MediaSource;
}
/** A document (PDF, text) or other file given inline or by URL. */
export interface FileBlock {
  type: 'file';
  source: MediaSource;
  filename?: string;
}
export interface ToolCallBlock {
  type: 'tool_call';
  id: string;
  name: string;
  input: Record<string, unknown>;
}
export interface ToolResultBlock {
  type: 'tool_result';
  toolCallId: string;
  /** Name of the function that was called (Gemini needs it; found from the matching call). */
  name: string;
  content: Array<TextBlock | ImageBlock>;
  isError?: boolean;
}

export type UserBlock = TextBlock | ImageBlock | FileBlock | ToolResultBlock;
export type AssistantBlock = TextBlock | ToolCallBlock;

export type CanonicalMessage =
  | { role: 'user'; content: UserBlock[] }
  | { role: 'assistant'; content: AssistantBlock[] };

export type CanonicalTool =
  | { type: 'function'; name: string; description?: string; parameters: Record<string, unknown> }
  | { type: 'web_search' }
  | { type: 'image_generation' };

export type CanonicalToolChoice =
  | { type: 'auto' }
  | { type: 'none' }
  | { type: 'required' }
  | { type: 'tool'; name: string };

export type CanonicalResponseFormat =
  | { type: 'json' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean };

export interface CanonicalRequest {
  model?: string;
  /** System prompt segments, in order. */
  system: string[];
  messages: CanonicalMessage[];
  tools: CanonicalTool[];
  toolChoice?: CanonicalToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  stream?: boolean;
  /** Number of choices; only set when above 1. */
  n?: number;
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: CanonicalResponseFormat;
  user?: string;
}

/**
 * Canonical names an encoder reports when it cannot carry them; each decoder
 * maps them back to the client's own field names for X-Protocol-Warning.
 */
export type CanonicalField =
  | 'n'
  | 'seed'
  | 'frequencyPenalty'
  | 'presencePenalty'
  | 'topK'
  | 'responseFormat'
  | 'parallelToolCalls'
  | 'user'
  | 'tools.web_search'
  | 'tools.image_generation'
  | 'content.image'
  | 'content.file'
  | 'toolResult.image';

export type FieldNames = Record<CanonicalField, string>;

/** Decoder output: the canonical request and the client fields it could not represent. */
export interface Decoded {
  request: CanonicalRequest;
  dropped: string[];
}

/** Encoder output: the upstream body and the canonical fields it could not carry. */
export interface Encoded {
  body: Record<string, unknown>;
  dropped: CanonicalField[];
}
