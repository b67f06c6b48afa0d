import type { FieldNames } from '../../canonical/request';

/** Client field names for X-Protocol-Warning when a messages request is translated. */
export const MESSAGES_FIELD_NAMES: FieldNames = {
  n: 'n',
  seed: 'seed',
  frequencyPenalty: 'frequency_penalty',
  presencePenalty: 'presence_penalty',
  topK: 'top_k',
  responseFormat: 'response_format',
  parallelToolCalls: 'tool_choice.disable_parallel_tool_use',
  user: 'metadata.user_id',
  'tools.web_search': 'tools.web_search',
  'tools.image_generation': 'tools.image_generation',
  'content.image': 'messages.content.image',
  'content.file': 'messages.content.document',
  'toolResult.image': 'messages.content.tool_result.content.image',
};
