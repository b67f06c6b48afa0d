// Shared by test/hostile/*.test.ts (not a test file itself): raw HTTP against a real gateway, and shape checks.
import type { ExecutionContext } from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function send(
  gw: TestGateway | string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  }
  const base = typeof gw === 'string' ? gw : gw.url;
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export type Shape = 'openai' | 'messages' | 'generate-content';

/** The body is exactly the error shape of spec 1 section 7 for the endpoint family. */
export function assertShape(t: ExecutionContext, r: Reply, shape: Shape, label = ''): void {
  const what = `${label} ${r.status} ${r.text.slice(0, 300)}`;
  t.truthy(r.json, `not JSON: ${what}`);
  t.regex(r.headers.get('content-type') ?? '', /application\/json/, what);
  if (!r.json) return;
  if (shape === 'messages') {
    t.is(r.json.type, 'error', what);
    t.is(typeof r.json.error?.type, 'string', what);
    t.is(typeof r.json.error?.message, 'string', what);
  } else if (shape === 'generate-content') {
    t.is(r.json.error?.code, r.status, what);
    t.is(typeof r.json.error?.status, 'string', what);
    t.is(typeof r.json.error?.message, 'string', what);
  } else {
    t.is(typeof r.json.error?.message, 'string', what);
    t.is(typeof r.json.error?.type, 'string', what);
    t.is(typeof r.json.error?.code, 'string', what);
  }
}

/** A gateway with the simulator and a worker, and one funded account. */
export async function world(): Promise<{ gw: TestGateway; key: string; accountId: string }> {
  const gw = await startGateway({}, { simulator: true, worker: true, mediaDelayMs: 0 });
  const accountId = (await gw.newAccount()).id;
  const key = (await gw.newKey(accountId)).key;
  return { gw, key, accountId };
}

/** JSON nested `depth` levels deep under `field` of an otherwise valid body. */
export function nested(depth: number): unknown {
  return JSON.parse('['.repeat(depth) + ']'.repeat(depth));
}
export const nestedText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
