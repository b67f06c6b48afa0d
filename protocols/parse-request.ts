import type { z } from 'zod';
import { parseInput } from '../domain/validation';
import { ChatCompletionsRequest } from './chat-completions/schema';
import { GenerateContentRequest } from './generate-content/schema';
import { normalizeGenerateContentKeys } from './generate-content/normalize-keys';
import { MessagesRequest } from './messages/schema';
import { ResponsesRequest } from './responses/schema';
import type { Protocol } from './types';

export interface RequestBodies {
  'chat-completions': ChatCompletionsRequest;
  messages: MessagesRequest;
  responses: ResponsesRequest;
  'generate-content': GenerateContentRequest;
}
export type RequestBody<P extends Protocol> = RequestBodies[P];

const SCHEMAS: { [P in Protocol]: z.ZodType<RequestBodies[P]> } = {
  'chat-completions': ChatCompletionsRequest,
  messages: MessagesRequest,
  responses: ResponsesRequest,
  'generate-content': GenerateContentRequest,
};

/**
 * Validates a parsed JSON body against the protocol's request schema and
 * returns it typed (unknown fields kept). Throws `invalid_request` whose
 * message names the field (`messages[0].role: Invalid option: ...`) and
 * whose param is its dotted path (`messages.0.role`).
 */
export function parseRequest<P extends Protocol>(protocol: P, body: unknown): RequestBody<P> {
  const input = protocol === 'generate-content' ? normalizeGenerateContentKeys(body) : body;
  return parseInput('body', SCHEMAS[protocol], input);
}
