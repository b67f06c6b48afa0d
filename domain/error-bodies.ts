/**
 * The three error body shapes of spec 1 section 7, one builder each. Every
 * error body the gateway writes goes through one of these: the HTTP edge
 * (gateway/errors/shapes.ts, which picks type/status per code), and the media
 * paths that store a client body for later (workflows, activities, provider
 * adapters). Pure and workflow-safe.
 */

/** `{error:{message, type, code, param?}}`: chat-completions, responses, embeddings, media. */
export interface OpenAiErrorFields {
  message: string;
  type: string;
  code: string | null;
  /** Omitted when undefined; media bodies carry `param: null` as OpenAI's Images API does. */
  param?: string | null;
}

export function openAiErrorBody(f: OpenAiErrorFields): { error: OpenAiErrorFields } {
  return { error: { message: f.message, type: f.type, code: f.code, ...(f.param !== undefined ? { param: f.param } : {}) } };
}

/** `{type:"error", error:{type, message}}`: the messages protocol. */
export function messagesErrorBody(type: string, message: string) {
  return { type: 'error' as const, error: { type, message } };
}

/** `{error:{code (number), message, status}}`: native generate-content. */
export function generateContentErrorBody(code: number, message: string, status: string) {
  return { error: { code, message, status } };
}

/** A media task's stored client body: OpenAI shape with `param: null`; `type` from the failure. */
export function mediaErrorJson(code: string, message: string, type: string): string {
  return JSON.stringify(openAiErrorBody({ message, type, code, param: null }));
}
