import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { fullCollection, heapGrowingPercent, returnStartupGarbage } from '../../platform/heap';
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

test('start-up garbage: collected once, at the first idle check after the first delay, never while serving', async (t) => {
  const lines: Array<[string, Record<string, unknown> | undefined]> = [];
  let busy = true;
  let collections = 0;
  const timer = returnStartupGarbage({ log: recordingLog(lines), idle: () => !busy, firstCheckMs: 60, checkEveryMs: 10, giveUpAfterMs: 5_000, collect: () => void collections++ });
  await sleep(200);
  t.is(collections, 0, 'busy: nothing collected');
  busy = false;
  await sleep(100);
  t.is(collections, 1);
  await sleep(100);
  t.is(collections, 1, 'once only');
  clearInterval(timer);
  t.is(lines[0][0], 'start-up garbage returned');
  t.true(typeof lines[0][1]?.pauseMs === 'number');
});

test('start-up garbage: not before the first delay, and left to V8 once the process served all along', async (t) => {
  let collections = 0;
  let checks = 0;
  const idle = () => {
    checks++;
    return false;
  };
  const early = returnStartupGarbage({ log: recordingLog([]), idle: () => true, firstCheckMs: 10_000, checkEveryMs: 10, collect: () => void collections++ });
  const busy = returnStartupGarbage({ log: recordingLog([]), idle, firstCheckMs: 0, checkEveryMs: 10, giveUpAfterMs: 80, collect: () => void collections++ });
  await sleep(250);
  clearInterval(early);
  const after = checks;
  await sleep(60);
  t.is(collections, 0);
  t.true(after > 0 && checks === after, 'the checks stopped once given up');
  clearInterval(busy);
});

test('start-up garbage: the real collection runs on this Node and leaves no gc on the global', (t) => {
  const collect = fullCollection();
  collect();
  t.is((globalThis as { gc?: unknown }).gc, undefined);
});
