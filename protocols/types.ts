/** The four chat wire formats the gateway speaks (spec 1 sections 4.1-4.4). */
export const PROTOCOLS = ['chat-completions', 'messages', 'responses', 'generate-content'] as const;

export type Protocol = (typeof PROTOCOLS)[number];

export function isProtocol(value: unknown): value is Protocol {
  return typeof value === 'string' && (PROTOCOLS as readonly string[]).includes(value);
}

/** One dispatched server-sent event: the `event:` field (when sent) and the joined `data:` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}
