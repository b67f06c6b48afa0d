import type { FieldNames } from '../../canonical/request';

/** Client field names for X-Protocol-Warning when a generate-content request is translated. */
export const GEMINI_FIELD_NAMES: FieldNames = {
  n: 'generationConfig.candidateCount',
  seed: 'generationConfig.seed',
  frequencyPenalty: 'generationConfig.frequencyPenalty',
  presencePenalty: 'generationConfig.presencePenalty',
  topK: 'generationConfig.topK',
  responseFormat: 'generationConfig.responseMimeType',
  parallelToolCalls: 'toolConfig',
  user: 'user',
  'tools.web_search': 'tools.googleSearch',
  'tools.image_generation': 'tools.image_generation',
  'content.image': 'contents.parts.inlineData',
  'content.file': 'contents.parts.fileData',
  'toolResult.image': 'contents.parts.functionResponse',
};
