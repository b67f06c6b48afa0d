// A worker's metrics listener runs on its own thread (platform/metrics/thread-server.ts): while a synchronous
// stretch holds the process's main loop, a scrape is still answered (the last text, marked stale, with
// how long the main loop has been silent), and the stretch then shows in the event-loop series.
import test from 'ava';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { parseProm, valueOf } from '../observability/prom-text';

test('a scrape during a 4-second synchronous stretch is answered before the stretch ends; the stretch shows in the event-loop series', async (t) => {
  t.timeout(120_000);
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/metrics-child.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const lines: string[] = [];
    const waiters: Array<() => void> = [];
    readline.createInterface({ input: child.stdout! }).on('line', (l) => {
      lines.push(l);
      for (const w of waiters.splice(0)) w();
    });
    const waitLine = async (pred: (l: string) => boolean) => {
      while (!lines.some(pred)) await new Promise<void>((r) => waiters.push(r));
      return lines.find(pred)!;
    };
    const url = (await waitLine((l) => l.startsWith('url '))).slice(4);

    const idle = await fetch(url);
    t.is(idle.status, 200);
    t.is(idle.headers.get('x-metrics-stale-seconds'), null, 'a responsive process answers fresh');
    t.true(valueOf(parseProm(await idle.text()), 'gateway_metrics_main_loop_silent_seconds') < 1);

    child.stdin!.write('block 4000\n');
    await waitLine((l) => l === 'blocking');
    const held = await fetch(url);
    const text = await held.text();
    t.false(lines.includes('unblocked'), 'answered while the main loop was still held');
    t.is(held.status, 200);
    t.truthy(held.headers.get('x-metrics-stale-seconds'), 'the last text, marked stale');
    t.true(valueOf(parseProm(text), 'gateway_metrics_main_loop_silent_seconds') >= 0.5, 'says the main loop is silent');

    await waitLine((l) => l === 'unblocked');
    // The next fresh scrape carries the stretch: the longest delay of the last minute is about its length.
    // A scrape the main thread does not answer within a second (a loaded machine, right after the
    // stretch) is served the last text, marked stale, which may predate the stretch: only a fresh one counts.
    const scrape = async () => {
      const res = await fetch(url);
      return { fresh: res.headers.get('x-metrics-stale-seconds') === null, series: parseProm(await res.text()) };
    };
    let { fresh, series: after } = await scrape();
    for (let i = 0; i < 50 && (!fresh || valueOf(after, 'gateway_event_loop_delay_seconds_count') === 0); i++) {
      await new Promise((r) => setTimeout(r, 100));
      ({ fresh, series: after } = await scrape());
    }
    t.true(fresh, 'a fresh scrape once the main loop is free again');
    t.true(valueOf(after, 'gateway_event_loop_delay_max_seconds') >= 3.5, `max ${valueOf(after, 'gateway_event_loop_delay_max_seconds')}`);
    const seconds = valueOf(after, 'gateway_event_loop_delay_seconds_count');
    const under50ms = valueOf(after, 'gateway_event_loop_delay_seconds_bucket', { le: '0.05' });
    t.true(seconds - under50ms >= 1, 'at least one second with a stall over 50 ms');
  } finally {
    child.kill('SIGKILL');
  }
});
