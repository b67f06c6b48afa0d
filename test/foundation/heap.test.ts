import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fullCollection, heapGrowingPercent, returnStartupGarbage, serverIdle } from '../../platform/heap';
import type { Logger } from '../../platform/logger';

const MB = 1024 ** 2;

test('unset: 100 % growth on a heap capped at 2 GB or more, V8\'s own rule under a lower cap (a pod\'s)', (t) => {
  t.is(heapGrowingPercent(undefined, 4144 * MB), 100, 'a large machine: V8 alone would allow 4x');
  t.is(heapGrowingPercent(undefined, 2048 * MB), 100);
  t.is(heapGrowingPercent(undefined, 524 * MB), 0, 'Node\'s cap under a 1 GiB cgroup: V8 already grows by about 1.45x');
  t.is(heapGrowingPercent(undefined, 688 * MB), 0, '--max-old-space-size=640');
});

test('a configured growth is used as given, 0 included', (t) => {
  t.is(heapGrowingPercent(25, 4144 * MB), 25);
  t.is(heapGrowingPercent(0, 4144 * MB), 0);
  t.is(heapGrowingPercent(100, 524 * MB), 100);
});

function recordingLog(lines: Array<[string, Record<string, unknown> | undefined]>): Logger {
  const log: Logger = {
    info: (msg: string, fields?: Record<string, unknown>) => void lines.push([msg, fields]),
    warn: (msg: string, fields?: Record<string, unknown>) => void lines.push([msg, fields]),
    error: (msg: string, fields?: Record<string, unknown>) => void lines.push([msg, fields]),
    debug: () => undefined,
    child: () => log,
  } as unknown as Logger;
  return log;
}

/** Waits (real time) until `ok` holds, up to 5 s: a loaded machine runs the timers late. */
async function until(ok: () => boolean): Promise<boolean> {
  for (const end = Date.now() + 5_000; Date.now() < end; await sleep(5)) if (ok()) return true;
  return ok();
}

test('start-up garbage: collected once, at the first idle check after the first delay, never while serving', async (t) => {
  const lines: Array<[string, Record<string, unknown> | undefined]> = [];
  let busy = true;
  let collections = 0;
  let done = 0;
  const timer = returnStartupGarbage({ log: recordingLog(lines), idle: () => !busy, firstCheckMs: 60, checkEveryMs: 10, giveUpAfterMs: 5_000, collect: () => void collections++, onDone: () => void done++ });
  await sleep(200);
  t.is(collections, 0, 'busy: nothing collected');
  busy = false;
  t.true(await until(() => collections === 1));
  await sleep(100);
  t.is(collections, 1, 'once only');
  t.is(done, 1, 'told once that the checks ended');
  clearInterval(timer);
  t.is(lines[0][0], 'start-up garbage returned');
  t.true(typeof lines[0][1]?.pauseMs === 'number');
});

test('start-up garbage: not before the first delay, and left to V8 once the process served all along', async (t) => {
  // The clock is the test's: the outcome does not depend on how late a loaded machine runs the timers.
  let clock = 0;
  const now = () => clock;
  let collections = 0;
  let earlyChecks = 0;
  let checks = 0;
  const idle = () => {
    checks++;
    return false;
  };
  const early = returnStartupGarbage({ log: recordingLog([]), idle: () => (earlyChecks++, true), firstCheckMs: 10_000, checkEveryMs: 5, collect: () => void collections++, now });
  let gaveUp = 0;
  const busy = returnStartupGarbage({ log: recordingLog([]), idle, firstCheckMs: 0, checkEveryMs: 5, giveUpAfterMs: 80, collect: () => void collections++, now, onDone: () => void gaveUp++ });
  clock = 50;
  t.true(await until(() => checks >= 3), 'checked while within its time');
  clock = 100; // past the busy one's 80 ms
  const given = checks;
  await sleep(100);
  const after = checks;
  await sleep(60);
  t.is(after, given, 'no check once the time ran out');
  t.is(checks, after, 'the checks stopped once given up');
  t.is(gaveUp, 1, 'told once that the checks ended');
  t.is(earlyChecks, 0, 'nothing asked before the first delay');
  t.is(collections, 0);
  clearInterval(early);
  clearInterval(busy);
});

test('start-up garbage: the real collection runs on this Node and leaves no gc on the global', (t) => {
  const collect = fullCollection();
  collect();
  t.is((globalThis as { gc?: unknown }).gc, undefined);
});

test('start-up garbage, the server\'s idle check: not while a request came since the last check, nor while a stream is open', async (t) => {
  let release: () => void = () => undefined;
  const server = http.createServer((req, res) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      release = () => res.end('data: last\n\n');
    } else res.end('ok');
  });
  const watch = serverIdle(server);
  const idle = watch.idle;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  t.true(idle(), 'nothing served yet');
  await (await fetch(`${url}/short`)).text();
  t.false(idle(), 'a request since the last check');
  t.true(idle(), 'and none since');

  const stream = await fetch(`${url}/stream`);
  const reader = stream.body!.getReader();
  await reader.read();
  t.false(idle(), 'the stream arrived since the last check');
  t.false(idle(), 'no new request, but the stream is still open');
  release();
  while (!(await reader.read()).done);
  await sleep(50);
  t.true(idle(), 'the stream ended');

  // A client that leaves mid-stream closes its response too.
  const gone = new AbortController();
  const left = await fetch(`${url}/stream`, { signal: gone.signal });
  await left.body!.getReader().read();
  idle();
  t.false(idle(), 'open');
  gone.abort();
  await sleep(100);
  t.true(idle(), 'the response closed when its client left');

  // Once stopped, requests no longer go through it (no listener left on the server or on responses).
  watch.stop();
  t.is(server.listenerCount('request'), 1, 'only the server\'s own handler');
  await (await fetch(`${url}/short`)).text();
  t.true(idle(), 'a request after stop is not counted');
});
