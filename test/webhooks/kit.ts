import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestGateway } from '../helpers/stack';

/** What a receiver got: one delivery attempt. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `n` deliveries arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/**
 * A webhook receiver on loopback. `answer(n, req, res)` decides the n-th
 * (1-based) delivery's answer: a status code, or 'hang' to leave it unanswered.
 */
export async function startReceiver(answer: (n: number, r: Received, res: ServerResponse) => number | 'hang' = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      waiters.splice(0).forEach((w) => w());
      const a = answer(received.length, r, res);
      if (a === 'hang') return;
      res.writeHead(a, { 'content-type': 'text/plain' }).end(a < 300 ? 'ok' : 'receiver says no');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/task`;
  return {
    url,
    received,
    async waitFor(n, timeoutMs = 150_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`only ${received.length} of ${n} deliveries arrived`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
      return received.slice(0, n);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * The verification recipe of docs/webhooks.md, written out with node:crypto
 * only (what a receiver in any language does):
 * 1. reject a `webhook-timestamp` more than 5 minutes from now;
 * 2. signed content = `${webhook-id}.${webhook-timestamp}.${raw body}`;
 * 3. key = base64-decode the secret after `whsec_`;
 * 4. expected = base64(HMAC-SHA256(key, signed content));
 * 5. accept if any `v1,<sig>` in `webhook-signature` (space-separated) equals it (constant-time).
 */
export function verifyRecipe(secret: string, headers: IncomingHttpHeaders, rawBody: string, nowSec = Math.floor(Date.now() / 1000)): boolean {
  const id = String(headers['webhook-id'] ?? '');
  const ts = String(headers['webhook-timestamp'] ?? '');
  const sigs = String(headers['webhook-signature'] ?? '');
  if (!id || !/^\d+$/.test(ts) || Math.abs(nowSec - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${ts}.${rawBody}`).digest('base64'));
  return sigs.split(' ').some((entry) => {
    const [version, sig] = entry.split(',', 2);
    const got = Buffer.from(sig ?? '');
    return version === 'v1' && got.length === expected.length && timingSafeEqual(got, expected);
  });
}

/** POST with the key; the response. */
export function post(gw: TestGateway, key: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
}

export function get(gw: TestGateway, key: string, path: string): Promise<Response> {
  return fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
}

/** Poll the task's delivery log until `done(log)`. */
export async function deliveriesUntil(gw: TestGateway, key: string, taskId: string, done: (log: any) => boolean, timeoutMs = 150_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await (await get(gw, key, `/v1/tasks/${taskId}/deliveries`)).json();
    if (done(log)) return log;
    if (Date.now() > deadline) throw new Error(`delivery log never settled: ${JSON.stringify(log)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Test settings: loopback receivers allowed, quick retries, short attempt timeouts. */
export const WEBHOOK_ENV = {
  DEPLOYMENT_MODE: 'test',
  WEBHOOK_TIMEOUT_MS: '3000',
  WEBHOOK_RETRY_INITIAL_MS: '300',
  WEBHOOK_RETRY_MAX_INTERVAL_MS: '2000',
};
