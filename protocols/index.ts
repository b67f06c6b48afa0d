/** The four chat wire formats: schemas, translators, usage extraction, SSE. */
export { PROTOCOLS, isProtocol, type Protocol, type SseEvent } from './types';
export { parseRequest, type RequestBody, type RequestBodies } from './parse-request';
export { SseParser, formatSse, SSE_DONE } from './sse';
export { getTranslator, DEFAULT_MAX_TOKENS } from './translate/registry';
export type {
  Translator,
  TranslatedRequest,
  StreamTranslator,
  StreamStep,
  TranslateRequestOptions,
  TranslateResponseOptions,
  TranslateStreamOptions,
} from './translate/types';
export {
  extractUsage,
  createUsageAccumulator,
  outputChars,
  ZERO_USAGE,
  type NormalizedUsage,
  type UsageAccumulator,
} from './usage';
