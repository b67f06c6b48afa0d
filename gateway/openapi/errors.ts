import { z } from 'zod';
import { STATUS_OF } from '../../domain/errors';

/**
 * The error bodies of spec 1 section 7, one schema per endpoint family. They
 * describe what `gateway/errors/shapes.ts` (and the Dify and MCP edges)
 * write; the fuzz run (test/fuzz/) checks every error response against the
 * schema of its family.
 */

/** The string codes the gateway itself emits (spec 1 section 7, plus `not_found`). */
export const GATEWAY_CODES = Object.keys(STATUS_OF) as [string, ...string[]];

/** `{error:{message, type, code, param?}}`. `code` may also be an upstream's own code passed through (images). */
const OpenAiShape = (description: string) =>
  z
    .object({
      error: z
        .object({
          message: z.string(),
          type: z.string(),
          code: z.string().nullable().meta({ description: `One of ${GATEWAY_CODES.join(', ')}; or the upstream's own code when its error passes through` }),
          param: z.string().nullable().optional(),
        })
        .strict(),
    })
    .strict()
    .meta({ description });

export const OpenAIError = OpenAiShape('OpenAI shape: chat-completions, responses, embeddings, models, balance, usage, knowledge REST');
export const MediaError = OpenAiShape(
  'OpenAI shape, media endpoints (images, videos, music, audio, transcripts). Avatar and digital-human calls use 401 authentication_error, 403 model_not_allowed, 404 model_not_found and 400 invalid_request_error (spec 2 section 7.4)',
);
export const ManagementError = OpenAiShape('OpenAI shape, management API (`/admin/v1`): 401 invalid_api_key for a missing or wrong admin token');

/** `{type:"error", error:{type, message}}`: the messages protocol (no string code). */
export const AnthropicError = z
  .object({
    type: z.literal('error'),
    error: z.object({ type: z.string(), message: z.string() }).strict(),
  })
  .strict()
  .meta({ description: 'Anthropic shape: /v1/messages and /v1/messages/batches' });

/** `{error:{code (number), message, status}}`: native generate-content; 402 and 429 share RESOURCE_EXHAUSTED. */
export const GeminiError = z
  .object({
    error: z.object({ code: z.number().int(), message: z.string(), status: z.string() }).strict(),
  })
  .strict()
  .meta({ description: 'Gemini shape: /v1beta/models/{model}:generateContent and the same under /v1/models' });

/** Dify's External Knowledge API errors: `{error_code, error_msg}` (1001 bad header, 1002 bad key, 2001 no such knowledge). */
export const DifyError = z
  .object({ error_code: z.number().int(), error_msg: z.string() })
  .strict()
  .meta({ description: "Dify External Knowledge API shape: /api/v1/integrations/dify/retrieval" });

/** JSON-RPC 2.0 error of the MCP server (refusals before the MCP layer carry the HTTP status and code in `data`). */
export const JsonRpcError = z
  .object({
    jsonrpc: z.literal('2.0'),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
    id: z.union([z.string(), z.number(), z.null()]),
  })
  .meta({ description: 'JSON-RPC 2.0 error: /mcp' });

/** Which error body an endpoint family writes. */
export type ErrorFamily = 'openai' | 'anthropic' | 'gemini' | 'media' | 'management' | 'dify' | 'mcp';

export const ERROR_SCHEMAS: Record<ErrorFamily, { name: string; schema: z.ZodType }> = {
  openai: { name: 'OpenAIError', schema: OpenAIError },
  anthropic: { name: 'AnthropicError', schema: AnthropicError },
  gemini: { name: 'GeminiError', schema: GeminiError },
  media: { name: 'MediaError', schema: MediaError },
  management: { name: 'ManagementError', schema: ManagementError },
  dify: { name: 'DifyError', schema: DifyError },
  mcp: { name: 'JsonRpcError', schema: JsonRpcError },
};
