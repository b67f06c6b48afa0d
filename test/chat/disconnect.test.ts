// A client that disconnects while still sending its request body (raw sockets): the call is
// recorded `interrupted` (spec 2 section 2.5), never as a gateway fault, costs nothing, and
// leaves no error in the log.
import test from 'ava';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { startGateway, type TestGateway } from '../helpers/stack';
import { createApp } from '../../gateway/app';
import { createLogger } from '../../platform/logger';
import { post, upstreamCount, usageRows } from './helpers';

let gw: TestGateway;
let server: Server;
let port: number;
const lines: string[] = [];
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  const sink = new Writable({ write(chunk, _e, cb) { lines.push(String(chunk)); cb(); } });
  server = createApp({ ...gw.deps, log: createLogger('debug', {}, sink) }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
});
test.after.always(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await gw?.close();
});

/** Send the head and part of the body on a raw socket, then close it (FIN) or reset it (RST). */
async function cutMidBody(path: string, headers: Record<string, string>, part: string, declared: number, how: 'close' | 'reset'): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  const head = [`POST ${path} HTTP/1.1`, 'host: gw', 'content-type: application/json', `content-length: ${declared}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.write(`${head.join('\r\n')}\r\n\r\n${part}`);
  await new Promise((r) => setTimeout(r, 150)); // the gateway has authenticated and is reading the body
  if (how === 'reset') socket.resetAndDestroy();
  else socket.destroy();
  await new Promise((r) => socket.once('close', r));
}

async function rowsOf(accountId: string, n: number): Promise<any[]> {
  for (let i = 0; i < 100; i++) {
    const rows = await usageRows(gw, accountId);
    if (rows.length >= n) return rows;
    await new Promise((r) => setTimeout(r, 30));
  }
  return usageRows(gw, accountId);
}

for (const how of ['close', 'reset'] as const) {
  for (const [path, auth] of [
    ['/v1/chat/completions', 'authorization'],
    ['/v1/messages', 'x-api-key'],
    ['/v1beta/models/gemini-2.5-flash:generateContent', 'x-goog-api-key'],
  ] as const) {
    test.serial(`${path}: a client that ${how === 'close' ? 'closes' : 'resets'} the connection mid-body is recorded interrupted, not internal_error`, async (t) => {
      const account = await gw.newAccount();
      const { key } = await gw.newKey(account.id);
      const before = lines.length;
      const sent = await upstreamCount(gw, 'openai-a');
      const body = JSON.stringify({ model: 'gpt-5.1', max_tokens: 16, messages: [{ role: 'user', content: 'x'.repeat(4000) }] });
      await cutMidBody(path, { [auth]: auth === 'authorization' ? `Bearer ${key}` : key }, body.slice(0, 100), body.length, how);

      const rows = await rowsOf(account.id, 1);

      t.is(rows.length, 1, JSON.stringify(rows));
      t.is(rows[0].status, 'interrupted');
      t.is(rows[0].error_code, 'client_closed');
      t.is(rows[0].cost_nano, 0);
      const logged = lines.slice(before).map((l) => JSON.parse(l));
      t.false(logged.some((l) => l.level === 'error' || l.level === 'warn'), JSON.stringify(logged));
      t.true(logged.some((l) => l.msg === 'request' && l.status === 499), JSON.stringify(logged));
      t.is(await upstreamCount(gw, 'openai-a'), sent, 'no upstream call');
      const balance = (await gw.admin('GET', `/accounts/${account.id}`)).body.balance_usd;
      t.is(balance, account.balance_usd);
    });
  }
}

test.serial('the same key answers normally on the next connection', async (t) => {
  const account = await gw.newAccount();
  const { key } = await gw.newKey(account.id);
  const body = JSON.stringify({ model: 'gpt-5.1', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] });
  await cutMidBody('/v1/chat/completions', { authorization: `Bearer ${key}` }, body.slice(0, 10), body.length, 'reset');
  const r = await post({ ...gw, url: `http://127.0.0.1:${port}` }, '/v1/chat/completions', JSON.parse(body), { key });
  t.is(r.status, 200, r.text);
  const rows = await rowsOf(account.id, 2);
  t.deepEqual(rows.map((r) => r.status).sort(), ['interrupted', 'success']);
});
