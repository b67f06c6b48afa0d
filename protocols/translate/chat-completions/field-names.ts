import type { FieldNames } from '../../canonical/request';

/** Client field names for X-Protocol-Warning when a chat-completions request is translated. */
export const CHAT_FIELD_NAMES: FieldNames = {
  n: 'n',
  seed: 'seed',
  frequencyPenalty: 'frequency_penalty',
  presencePenalty: 'presence_penalty',
  topK: 'top_k',
  responseFormat: 'response_format',
  parallelToolCalls: 'parallel_tool_calls',
  user: 'user',
  'tools.web_search': 'tools.web_search',
  'tools.image_generation': 'tools.image_generation',
  'content.image': 'messages.content.image_url',
  'content.file': 'messages.content.file',
  'toolResult.image': 'messages.content.image_url',
};
