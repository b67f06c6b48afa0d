/** generate-content response shapes as read from an upstream (every field optional). */

export interface GeminiWirePart {
  text?: string;
  thought?: boolean;
  functionCall?: { name?: string; args?: Record<string, unknown>; id?: string };
}

export interface GeminiWireCandidate {
  content?: { role?: string; parts?: GeminiWirePart[] };
  finishReason?: string;
  index?: number;
}

export interface GenerateContentResponse {
  candidates?: GeminiWireCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: unknown;
  modelVersion?: string;
  responseId?: string;
  error?: unknown;
}
