import { z } from 'zod';
import { openUnion } from '../validation/open-union';
import { PublicUrl, PublicUrlOrDataImage } from '../../domain/url-policy';

/** POST /v1/responses request body (spec 1 section 4.4, OpenAI Responses API). */

const InputText = z.looseObject({ type: z.literal('input_text'), text: z.string() });
const InputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: PublicUrlOrDataImage.nullish(),
  file_id: z.string().nullish(),
  detail: z.enum(['auto', 'low', 'high']).nullish(),
});
const InputFile = z.looseObject({
  type: z.literal('input_file'),
  file_data: z.string().nullish(),
  file_id: z.string().nullish(),
  file_url: PublicUrl.nullish(),
  filename: z.string().nullish(),
});
const OutputText = z.looseObject({ type: z.literal('output_text'), text: z.string() });
const Refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

export const ResponsesContentPart = openUnion([InputText, InputImage, InputFile, OutputText, Refusal]);
export type ResponsesContentPart = z.infer<typeof ResponsesContentPart>;

/** `{role, content}`; `type: "message"` is optional on input. */
export const ResponsesMessageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(ResponsesContentPart)]),
});
export const ResponsesFunctionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
});
export const ResponsesFunctionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string(),
  output: z.union([z.string(), z.array(ResponsesContentPart)]),
});
const KNOWN_ITEMS = new Set(['message', 'function_call', 'function_call_output']);
/** Other item types (reasoning, web_search_call, image_generation_call, ...) are forwarded as sent. */
const OtherItem = z.looseObject({
  type: z.string().refine((t) => !KNOWN_ITEMS.has(t), { message: 'Invalid input', abort: true }),
});

export const ResponsesInputItem = z.union([
  ResponsesMessageItem,
  ResponsesFunctionCallItem,
  ResponsesFunctionCallOutputItem,
  OtherItem,
]);
export type ResponsesInputItem = z.infer<typeof ResponsesInputItem>;

export const ResponsesTool = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('function'),
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
  z.looseObject({ type: z.literal('web_search') }),
  z.looseObject({ type: z.literal('image_generation'), size: z.string().nullish() }),
]);
export type ResponsesTool = z.infer<typeof ResponsesTool>;

export const ResponsesToolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string() }),
  z.looseObject({ type: z.enum(['web_search', 'image_generation']) }),
]);

export const PREVIOUS_RESPONSE_ID_MESSAGE =
  'previous_response_id is not supported: responses are not stored, carry the conversation history in input';

export const ResponsesRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(ResponsesInputItem)]),
  instructions: z.string().nullish(),
  stream: z.boolean().nullish(),
  max_output_tokens: z.int().min(1).nullish(),
  reasoning: z
    .looseObject({ effort: z.enum(['low', 'medium', 'high']).nullish(), summary: z.string().nullish() })
    .nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  tools: z.array(ResponsesTool).nullish(),
  tool_choice: ResponsesToolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  previous_response_id: z.null({ error: PREVIOUS_RESPONSE_ID_MESSAGE }).optional(),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;
