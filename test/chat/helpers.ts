// Shared helpers for the chat tests (not a test file itself).
import type { TestGateway } from '../helpers/stack';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
  /** The gateway's request id (x-gateway-trace). */
  trace: string;
}

/** POST a JSON body with a key; `body` may be a raw string to send bad JSON. */
export async function post(
  gw: TestGateway,
  path: string,
  body: unknown,
  opts: { key?: string; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const res = await fetch(gw.url + path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body), signal: opts.signal });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json, trace: res.headers.get('x-gateway-trace') ?? '' };
}

/** `data:` payloads (and `event:` names) of an SSE body, in order. */
export function sseEvents(text: string): { event?: string; data: string }[] {
  const out: { event?: string; data: string }[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    if (!block.trim()) continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    out.push(event ? { event, data: data.join('\n') } : { data: data.join('\n') });
  }
  return out;
}

export async function addFault(gw: TestGateway, channel: string, fault: Record<string, unknown>, times?: number): Promise<void> {
  const r = await gw.control('POST', '/faults', { channel, fault, times });
  if (!r?.ok) throw new Error(`fault not set: ${JSON.stringify(r)}`);
}

export async function setUsage(gw: TestGateway, channel: string, usage: Record<string, number>): Promise<void> {
  const r = await gw.control('POST', '/usage', { channel, usage });
  if (!r?.ok) throw new Error(`usage not set: ${JSON.stringify(r)}`);
}

/** Requests the simulator received on a channel (count since the last clear). */
export async function upstreamCount(gw: TestGateway, channel: string): Promise<number> {
  return (await gw.control('GET', `/requests?channel=${channel}`)).count;
}

/**
 * The usage row of a request. A stream's row is written after its last byte
 * went out, so the client can be ahead of it: wait up to `ms` for it.
 */
export async function usageRow(gw: TestGateway, requestId: string, ms = 5000): Promise<any> {
  const until = Date.now() + ms;
  for (;;) {
    await gw.deps.usage.flush();
    const row = await gw.deps.db.Usage.findById(requestId).lean();
    if (row || Date.now() > until) return row;
    await sleep(20);
  }
}

export async function usageRows(gw: TestGateway, accountId: string): Promise<any[]> {
  await gw.flushRows();
  return gw.deps.db.Usage.find({ account_id: accountId }).lean();
}

export async function chargeEntry(gw: TestGateway, requestId: string): Promise<any> {
  await gw.deps.wallet.journal.flush();
  return gw.deps.db.Ledger.findById(`${requestId}:charge`).lean();
}

/** Top up an account to exactly `usd` more (admin API). */
export async function topUp(gw: TestGateway, accountId: string, usd: string): Promise<void> {
  const r = await gw.admin('POST', `/accounts/${accountId}/topups`, { amount_usd: usd });
  if (r.status !== 201) throw new Error(`top-up failed: ${JSON.stringify(r.body)}`);
}

/** A fresh account and key, so money assertions see no other test. */
export async function freshKey(gw: TestGateway, fields: Record<string, unknown> = {}): Promise<{ accountId: string; keyId: string; key: string }> {
  const acc = await gw.newAccount();
  const k = await gw.newKey(acc.id, fields);
  return { accountId: acc.id, keyId: k.id, key: k.key };
}

export const NANO = 1_000_000_000;

export const user = (content: string) => [{ role: 'user', content }];

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
