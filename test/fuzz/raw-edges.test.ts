import net from 'node:net';
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';

/**
 * The edges schemathesis does not reach, on raw sockets: invalid UTF-8,
 * JSON nested 10,000 deep, 100 MB bodies, slow-loris uploads and header
 * floods. Each gets a clear 4xx in the endpoint family's shape with
 * x-gateway-trace (or, for the slow client, a 408 and a closed connection),
 * and the gateway answers /healthz after each. Docs: docs/fuzzing.md.
 */

// Short enough for a test, long enough that a 32 MB body is read in time on a loaded machine.
const IDLE_MS = 2000;
const TOTAL_MS = 10_000;
const MB = 1024 * 1024;

let gw: TestGateway;
let key: string;
let port: number;

test.before(async () => {
  gw = await startGateway({ BODY_IDLE_TIMEOUT_MS: String(IDLE_MS), BODY_READ_TIMEOUT_MS: String(TOTAL_MS) });
  const account = await gw.newAccount({ name: 'raw-edges' });
  key = (await gw.newKey(account.id)).key;
  port = Number(new URL(gw.url).port);
});

test.after.always(async () => {
  await gw?.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (after its answer, or without one). */
  closed: boolean;
  /** Bytes of the body the client managed to send before the answer or the close. */
  sent: number;
}

interface RawRequest {
  head: string;
  /** Body chunks; a function yields them lazily (big or slow bodies). */
  body?: Buffer | (() => AsyncIterable<Buffer>);
  timeoutMs?: number;
  /** Resolve only when the server closes the connection (or at the timeout). */
  waitForClose?: boolean;
  /** Keep writing the whole body even once an answer has come (a client that reads only after sending, as Python's requests does). */
  sendAll?: boolean;
}

/** True once the buffer holds a status line, headers and the whole Content-Length body. */
function complete(buf: Buffer): boolean {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(buf.subarray(0, end).toString('latin1'));
  return !!length && buf.length >= end + 4 + Number(length[1]);
}

/** One request on a fresh socket; resolves when the server has answered and closed, or after `timeoutMs`. */
function raw(req: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve) => {
    // A client that sends all before reading also goes on sending after the server's FIN (TCP allows it; such clients do).
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: req.sendAll === true });
    const received: Buffer[] = [];
    let sent = 0;
    let closed = false;
    let answered = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parse(Buffer.concat(received)), closed, sent });
    };
    const timer = setTimeout(finish, req.timeoutMs ?? 30_000);
    socket.on('data', (d) => {
      received.push(d);
      answered = true;
      // A whole answer on a connection the server keeps open: done (the slow and oversized cases also check the close).
      if (complete(Buffer.concat(received)) && !req.waitForClose) finish();
    });
    socket.on('error', () => undefined); // EPIPE / ECONNRESET while we still write: the answer is what counts
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('connect', async () => {
      socket.write(req.head);
      if (!req.body) return;
      if (Buffer.isBuffer(req.body)) {
        socket.write(req.body);
        sent = req.body.length;
        return;
      }
      for await (const chunk of req.body()) {
        if (closed || (answered && !req.sendAll) || socket.destroyed) break;
        const ok = socket.write(chunk);
        sent += chunk.length;
        if (!ok) {
          await new Promise<void>((r) => {
            const go = () => {
              socket.off('drain', go);
              socket.off('close', go);
              r();
            };
            socket.on('drain', go);
            socket.on('close', go);
          });
        }
      }
      if (req.sendAll && !socket.destroyed) socket.end();
    });
  });
}

function parse(buf: Buffer): Omit<RawAnswer, 'closed' | 'sent'> {
  const text = buf.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: text };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = text.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

function unchunk(s: string): string {
  let out = '';
  for (let i = 0; i < s.length;) {
    const nl = s.indexOf('\r\n', i);
    const size = parseInt(s.slice(i, nl), 16);
    if (!size) break;
    out += s.slice(nl + 2, nl + 2 + size);
    i = nl + 2 + size + 2;
  }
  return out;
}

/** A pause that does not keep the test process alive. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

type Family = 'openai' | 'anthropic' | 'gemini';

/** The endpoints of each error family, with the headers that get a body read (a valid credential). */
const ENDPOINTS: Array<{ family: Family; label: string; path: string; auth: () => string }> = [
  { family: 'openai', label: 'chat completions', path: '/v1/chat/completions', auth: () => `authorization: Bearer ${key}` },
  { family: 'anthropic', label: 'messages', path: '/v1/messages', auth: () => `x-api-key: ${key}` },
  { family: 'gemini', label: 'generate content', path: '/v1beta/models/gemini-2.5-flash:generateContent', auth: () => `x-goog-api-key: ${key}` },
  { family: 'openai', label: 'media (images)', path: '/v1/images/generations', auth: () => `authorization: Bearer ${key}` },
  { family: 'openai', label: 'management', path: '/admin/v1/accounts', auth: () => `authorization: Bearer ${gw.config.ADMIN_TOKEN}` },
];

function head(path: string, auth: string, extra: string[]): string {
  return [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', auth, 'content-type: application/json', ...extra, '', ''].join('\r\n');
}

/** The body is an error of the family's shape (spec 1 section 7). */
function shapeOk(family: Family, body: string): string | null {
  let j: any;
  try {
    j = JSON.parse(body);
  } catch {
    return `not JSON: ${body.slice(0, 200)}`;
  }
  if (family === 'anthropic') return j.type === 'error' && typeof j.error?.type === 'string' && typeof j.error?.message === 'string' ? null : `not the Anthropic shape: ${body}`;
  if (family === 'gemini') return typeof j.error?.code === 'number' && typeof j.error?.status === 'string' && typeof j.error?.message === 'string' ? null : `not the Gemini shape: ${body}`;
  return typeof j.error?.message === 'string' && typeof j.error?.type === 'string' && typeof j.error?.code === 'string' ? null : `not the OpenAI shape: ${body}`;
}

async function healthy(t: import('ava').ExecutionContext) {
  const res = await fetch(`${gw.url}/healthz`);
  t.is(res.status, 200, 'the gateway still serves /healthz');
}

function expectRefusal(t: import('ava').ExecutionContext, a: RawAnswer, status: number, family: Family, mention: RegExp) {
  t.is(a.status, status, `status (body: ${a.body.slice(0, 300)})`);
  t.regex(a.headers['x-gateway-trace'] ?? '', /^req_[0-9a-f]{24}$/, 'x-gateway-trace');
  t.is(shapeOk(family, a.body), null);
  t.regex(a.body, mention);
}

for (const ep of ENDPOINTS) {
  test.serial(`invalid UTF-8 in a ${ep.label} body is a 400 in its shape`, async (t) => {
    // A JSON document whose string holds bytes that are not UTF-8 (a lone continuation byte, an overlong form).
    const body = Buffer.concat([Buffer.from('{"model":"gpt-5-mini","name":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xc0, 0xaf]), Buffer.from('","messages":[{"role":"user","content":"x"}]}')]);
    const a = await raw({ head: head(ep.path, ep.auth(), [`content-length: ${body.length}`]), body });
    expectRefusal(t, a, 400, ep.family, /UTF-8/);
    await healthy(t);
  });

  test.serial(`JSON nested 10,000 deep in a ${ep.label} body is a 400 in its shape`, async (t) => {
    const body = Buffer.from(`{"model":"gpt-5-mini","x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    const a = await raw({ head: head(ep.path, ep.auth(), [`content-length: ${body.length}`]), body });
    expectRefusal(t, a, 400, ep.family, /nests deeper than 100 levels/);
    await healthy(t);
  });
}

/** 100 MB in 1 MB chunks, produced as they are sent. */
async function* hundredMegabytes(): AsyncIterable<Buffer> {
  const chunk = Buffer.alloc(MB, 0x20);
  yield Buffer.from('{"model":"gpt-5-mini","pad":"');
  for (let i = 0; i < 100; i++) yield chunk;
  yield Buffer.from('"}');
}

test.serial('a 100 MB chat body with its Content-Length is a 413 before the body is read, and the connection closes', async (t) => {
  const a = await raw({ head: head('/v1/chat/completions', `authorization: Bearer ${key}`, [`content-length: ${100 * MB + 32}`]), body: hundredMegabytes, waitForClose: true, timeoutMs: 10_000 });
  expectRefusal(t, a, 413, 'openai', /exceeds 32 MB/);
  t.true(a.closed, 'the server closed the connection');
  t.true(a.sent < 100 * MB, `the client did not have to send all of it (sent ${a.sent} bytes)`);
  await healthy(t);
});

test.serial('a 100 MB chunked messages body (no Content-Length) is a 413 in the Anthropic shape once past the limit', async (t) => {
  const chunked = async function* () {
    for await (const c of hundredMegabytes()) yield Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]);
    yield Buffer.from('0\r\n\r\n');
  };
  const a = await raw({ head: head('/v1/messages', `x-api-key: ${key}`, ['transfer-encoding: chunked']), body: chunked, waitForClose: true, timeoutMs: 20_000 });
  expectRefusal(t, a, 413, 'anthropic', /exceeds 32 MB/);
  t.true(a.closed, 'the server closed the connection');
  await healthy(t);
});

test.serial('a client that sends its whole 40 MB body before reading still reads the 413 (the server drains before it closes)', async (t) => {
  // Over the 32 MB limit by 8 MB: the gateway answers at 32 MB, then reads and drops the rest for a while
  // (gateway/middleware/body.ts `lingerAfterAnswer`) instead of closing with unread bytes, whose reset would cut the answer.
  const chunk = Buffer.alloc(MB, 0x20);
  const a = await raw({
    head: head('/v1/messages', `x-api-key: ${key}`, ['transfer-encoding: chunked']),
    body: async function* () {
      for (let i = 0; i < 40; i++) yield Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
      yield Buffer.from('0\r\n\r\n');
    },
    sendAll: true,
    waitForClose: true,
    timeoutMs: 20_000,
  });
  t.is(a.sent, 40 * (MB + 10) + 5, 'the whole body went out');
  expectRefusal(t, a, 413, 'anthropic', /exceeds 32 MB/);
  t.true(a.closed);
  await healthy(t);
});

test.serial('a 100 MB multipart images edit (limit 95 MB) is a 413 in the OpenAI shape, and the connection closes', async (t) => {
  const boundary = 'fuzzboundary';
  const a = await raw({
    head: [`POST /v1/images/edits HTTP/1.1`, 'host: 127.0.0.1', `authorization: Bearer ${key}`, `content-type: multipart/form-data; boundary=${boundary}`, `content-length: ${100 * MB + 200}`, '', ''].join('\r\n'),
    body: async function* () {
      yield Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="image"; filename="a.png"\r\ncontent-type: image/png\r\n\r\n`);
      const chunk = Buffer.alloc(MB, 0x41);
      for (let i = 0; i < 100; i++) yield chunk;
    },
    waitForClose: true,
    timeoutMs: 10_000,
  });
  expectRefusal(t, a, 413, 'openai', /exceeds 95 MB/);
  t.true(a.closed, 'the server closed the connection');
  await healthy(t);
});

test.serial('a stalled upload (headers, then a little, then nothing) gets a 408 and a closed connection', async (t) => {
  const started = Date.now();
  const a = await raw({
    head: head('/v1/chat/completions', `authorization: Bearer ${key}`, ['content-length: 1000']),
    body: async function* () {
      yield Buffer.from('{"model":"gpt-5-mini",');
      await sleep(60_000);
    },
    timeoutMs: 30_000,
    waitForClose: true,
  });
  expectRefusal(t, a, 408, 'openai', /stalled/);
  t.true(a.closed, 'the server closed the connection');
  t.true(Date.now() - started < IDLE_MS + 10_000, 'refused within seconds of going idle');
  await healthy(t);
});

test.serial('a slow-loris upload (a byte every 200 ms, never idle) gets a 408 and a closed connection at the read deadline', async (t) => {
  const started = Date.now();
  const a = await raw({
    head: head('/v1beta/models/gemini-2.5-flash:generateContent', `x-goog-api-key: ${key}`, ['content-length: 100000']),
    body: async function* () {
      for (let i = 0; i < 1000; i++) {
        yield Buffer.from(' ');
        await sleep(200);
      }
    },
    timeoutMs: 30_000,
    waitForClose: true,
  });
  expectRefusal(t, a, 408, 'gemini', /not complete after/);
  t.true(a.closed, 'the server closed the connection');
  t.true(Date.now() - started < TOTAL_MS + 10_000, 'refused at the read deadline');
  await healthy(t);
});

test.serial('a slow-loris multipart upload gets a 408 and a closed connection', async (t) => {
  const boundary = 'slowboundary';
  const a = await raw({
    head: [`POST /v1/images/edits HTTP/1.1`, 'host: 127.0.0.1', `authorization: Bearer ${key}`, `content-type: multipart/form-data; boundary=${boundary}`, 'content-length: 100000', '', ''].join('\r\n'),
    body: async function* () {
      yield Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="prompt"\r\n\r\n`);
      for (let i = 0; i < 1000; i++) {
        yield Buffer.from('a');
        await sleep(200);
      }
    },
    timeoutMs: 30_000,
    waitForClose: true,
  });
  expectRefusal(t, a, 408, 'openai', /not complete after/);
  t.true(a.closed, 'the server closed the connection');
  await healthy(t);
});

test.serial('a flood of 5,000 headers is a 431 in the endpoint\'s shape with x-gateway-trace', async (t) => {
  const flood = Array.from({ length: 5000 }, (_, i) => `x-flood-${i}: ${'v'.repeat(8)}`);
  const a = await raw({ head: [`POST /v1/messages HTTP/1.1`, 'host: 127.0.0.1', `x-api-key: ${key}`, ...flood, 'content-length: 2', '', '{}'].join('\r\n'), waitForClose: true, timeoutMs: 10_000 });
  expectRefusal(t, a, 431, 'anthropic', /headers are too large/);
  t.true(a.closed, 'the server closed the connection');
  await healthy(t);
});

test.serial('one 64 KB header is a 431 in the endpoint\'s shape', async (t) => {
  const a = await raw({ head: [`GET /v1beta/models/gemini-2.5-flash:generateContent HTTP/1.1`, 'host: 127.0.0.1', `x-big: ${'b'.repeat(64 * 1024)}`, '', ''].join('\r\n') });
  expectRefusal(t, a, 431, 'gemini', /headers are too large/);
  await healthy(t);
});

test.serial('a malformed request line or header is a 400 with x-gateway-trace, and the process keeps serving', async (t) => {
  const a = await raw({ head: 'GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nbad header without colon\r\n\r\n' });
  expectRefusal(t, a, 400, 'openai', /malformed HTTP request/);
  const b = await raw({ head: 'GET /v1/\x01models HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n' });
  t.is(b.status, 400);
  t.truthy(b.headers['x-gateway-trace']);
  await healthy(t);
});

test.serial('many connections each holding a stalled upload are all refused and closed, and the gateway keeps serving', async (t) => {
  const answers = await Promise.all(Array.from({ length: 50 }, () => raw({
    head: head('/v1/chat/completions', `authorization: Bearer ${key}`, ['content-length: 500']),
    body: async function* () {
      yield Buffer.from('{');
      await sleep(60_000);
    },
    timeoutMs: 30_000,
    waitForClose: true,
  })));
  t.deepEqual([...new Set(answers.map((a) => a.status))], [408]);
  t.true(answers.every((a) => a.closed));
  await healthy(t);
});
