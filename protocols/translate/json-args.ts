import { errors } from '../../domain/errors';

/** Tool-call arguments (a JSON string on the chat wire) as the object other protocols need. */
export function parseArguments(text: string, param: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw errors.invalidRequest(`${param}: tool call arguments are not valid JSON`, param);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw errors.invalidRequest(`${param}: tool call arguments must be a JSON object`, param);
  }
  return value as Record<string, unknown>;
}

/** A tool result's text as a JSON object when it is one. */
export function parseObject(text: string): Record<string, unknown> | undefined {
  const t = text.trimStart();
  if (!t.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(t);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Upstream tool-call arguments (a JSON string) as an object; {} when the upstream sent bad JSON. */
export function parseInput(args: string): Record<string, unknown> {
  return parseObject(args || '{}') ?? {};
}
