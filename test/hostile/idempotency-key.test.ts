import test from 'ava';
import net from 'node:net';
import type { TestGateway } from '../helpers/stack';
import { assertShape, send, world } from './kit';

// Idempotency-Key is 1 to 200 printable ASCII characters (spec 2 section 4.1): an empty one is a bad
// key, not an absent one, on every submission family, whatever way the client sends it.

let gw: TestGateway;
let key: string;
test.before(async () => {
  ({ gw, key } = await world());
});
test.after.always(async () => gw?.close());

const SUBMISSIONS: Array<[string, unknown]> = [
  ['/v1/images/generations', { model: 'gpt-image-1', prompt: 'a fox', async: true }],
  ['/v1/images/edits', { model: 'gpt-image-1', prompt: 'a fox', image: 'https://cdn.example.com/a.png' }],
  ['/v1/videos/generations', { model: 'seedance-1-0-pro', content: [{ type: 'text', text: 'a fox' }] }],
  ['/v1/videos/generations', { model: 'dh-lipsync', source_video_url: 'https://cdn.example.com/a.mp4', audio_url: 'https://cdn.example.com/a.mp3', duration: 15 }],
  ['/v1/music/generations', { model: 'suno-v4-5', prompt: 'la la', title: 't', tags: 'pop' }],
  ['/v1/audio/speech', { model: 'speech-2-5-hd', text: 'hello', voice_id: 'male-qn-qingse' }],
  ['/v1/audio/voice-clone', { audio_url: 'https://cdn.example.com/v.mp3', name: 'n' }],
  ['/v1/videos/avatars', { name: 'n', source_url: 'https://cdn.example.com/a.jpg' }],
  ['/v1/transcripts/extract', { url: 'https://v.example.com/a' }],
];

/** A raw HTTP/1.1 request, so the header is sent exactly as written (`Idempotency-Key:` with nothing after it). */
function raw(key: string, path: string, body: unknown, headerLine: string): Promise<{ status: number; json: any }> {
  const u = new URL(gw.url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname, () => {
      sock.write(`POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${headerLine}\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`);
    });
    let data = '';
    sock.on('data', (d) => (data += d.toString()));
    sock.on('error', reject);
    sock.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1]);
      const text = data.slice(data.indexOf('\r\n\r\n') + 4);
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status, json });
    });
  });
}

test('empty, blank or over-long keys: 400 invalid_idempotency_key on every submission, nothing charged', async (t) => {
  const acc = await gw.newAccount();
  const own = (await gw.newKey(acc.id)).key;
  const before = await gw.deps.wallet.balance(acc.id);
  for (const [path, body] of SUBMISSIONS) {
    for (const line of ['Idempotency-Key:', 'Idempotency-Key: ', 'Idempotency-Key:    ', `Idempotency-Key: ${'k'.repeat(201)}`]) {
      const r = await raw(own, path, body, line);
      t.is(r.status, 400, `${path} [${line.slice(0, 30)}]: ${JSON.stringify(r.json)}`);
      t.is(r.json?.error?.code, 'invalid_idempotency_key', `${path} [${line.slice(0, 30)}]`);
    }
    const f = await send(gw, 'POST', path, { key: own, body, headers: { 'Idempotency-Key': '' } });
    t.is(f.status, 400, `${path} fetch ''`);
    assertShape(t, f, 'openai');
    t.is(f.json.error.code, 'invalid_idempotency_key');
  }
  t.is(await gw.deps.wallet.balance(acc.id), before);
});

test('1 and 200 characters are valid keys', async (t) => {
  for (const k of ['a', 'b'.repeat(200)]) {
    const r = await send(gw, 'POST', '/v1/images/generations', { key, body: { model: 'gpt-image-1', prompt: `k${k.length}`, async: true }, headers: { 'Idempotency-Key': k } });
    t.is(r.status, 200, r.text);
  }
});

test('the operator top-up takes the same rule: an empty key is refused, a good one replays', async (t) => {
  const acc = await gw.newAccount();
  const topup = (headers: Record<string, string>) =>
    send(gw, 'POST', `/admin/v1/accounts/${acc.id}/topups`, { body: { amount_usd: '200' }, headers: { authorization: `Bearer ${gw.config.ADMIN_TOKEN}`, ...headers } });
  const before = await gw.deps.wallet.balance(acc.id);
  for (const k of ['', 'x'.repeat(201)]) {
    const r = await topup({ 'Idempotency-Key': k });
    t.is(r.status, 400, r.text);
    t.is(r.json.error.code, 'invalid_idempotency_key');
  }
  t.is(await gw.deps.wallet.balance(acc.id), before);
  const first = await topup({ 'Idempotency-Key': 'topup-1' });
  const again = await topup({ 'Idempotency-Key': 'topup-1' });
  t.is(first.status, 201);
  t.false(first.json.replayed);
  t.true(again.json.replayed);
});
