import { Worker } from 'node:worker_threads';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger';

/** How long a scrape waits for the main thread's fresh text before it gets the last one. */
const FRESH_WAIT_MS = 1000;
/** How often the main thread says it is alive. */
const BEAT_MS = 250;
export const SILENT_SERIES = 'gateway_metrics_main_loop_silent_seconds';

/**
 * The listener's own thread (plain CommonJS, evaluated: nothing to bundle). It answers every scrape
 * from its own event loop: the main thread's fresh text when that comes within FRESH_WAIT_MS, else
 * the last text it had, marked `x-metrics-stale-seconds`. Either way the silence series is set to
 * how long the main thread has not been heard from (a loop held by a synchronous stretch).
 */
const LISTENER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const SILENT = new RegExp('^(' + workerData.silentSeries + '(?:\\\\{[^}]*\\\\})?) .*$', 'm');
let seq = 0;
const waiting = new Map();
let last = null;
let lastAt = 0;
let heardAt = Date.now();
parentPort.on('message', (m) => {
  heardAt = Date.now();
  if (m.type !== 'text') return;
  if (m.ok) { last = m.text; lastAt = heardAt; }
  const done = waiting.get(m.id);
  if (done) { waiting.delete(m.id); done(m); }
});
const server = http.createServer((req, res) => {
  const path = (req.url || '/').split('?')[0];
  if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\\n');
    return;
  }
  const id = ++seq;
  const answer = (m) => {
    const silent = ((Date.now() - heardAt) / 1000).toFixed(3);
    const headers = { 'content-type': workerData.contentType };
    let text;
    if (m && m.ok) text = m.text;
    else if (m && !m.ok) { res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\\n'); return; }
    else if (last !== null) { text = last; headers['x-metrics-stale-seconds'] = ((Date.now() - lastAt) / 1000).toFixed(3); }
    else { res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' }).end('metrics unavailable: the process has not answered yet\\n'); return; }
    text = text.replace(SILENT, (_, series) => series + ' ' + silent);
    res.writeHead(200, headers).end(req.method === 'HEAD' ? undefined : text);
  };
  const timer = setTimeout(() => { waiting.delete(id); answer(null); }, workerData.waitMs);
  waiting.set(id, (m) => { clearTimeout(timer); answer(m); });
  parentPort.postMessage({ type: 'scrape', id });
});
server.on('error', (err) => parentPort.postMessage({ type: 'error', message: String(err && err.message || err) }));
server.listen(workerData.port, workerData.host, () => parentPort.postMessage({ type: 'listening', port: server.address().port }));
`;

/**
 * The metrics listener on a thread of its own: a scrape is answered within about a second even
 * while the process's main event loop is held (a worker busy with a long synchronous stretch),
 * where a listener on that loop answers nothing until the stretch ends. The main thread still
 * renders the text (the registry lives there); the thread only serves it, and says how long the
 * main thread has been silent (`gateway_metrics_main_loop_silent_seconds`).
 */
export async function serveMetricsOffThread(registry: Registry, port: number, host: string, log: Logger): Promise<{ url: string; close(): Promise<void> }> {
  new Gauge({
    name: SILENT_SERIES,
    help: 'How long this process\'s main event loop had not answered its metrics thread when this scrape was served (0 to 0.25 s when it is responsive)',
    registers: [registry],
  });
  const thread = new Worker(LISTENER, {
    eval: true,
    workerData: { port, host, waitMs: FRESH_WAIT_MS, contentType: registry.contentType, silentSeries: SILENT_SERIES },
  });
  const beat = setInterval(() => thread.postMessage({ type: 'beat' }), BEAT_MS);
  beat.unref();
  thread.on('message', (m: { type: string; id?: number }) => {
    if (m.type !== 'scrape') return;
    registry.metrics().then(
      (text) => thread.postMessage({ type: 'text', id: m.id, ok: true, text }),
      (err: unknown) => {
        log.error('metrics scrape failed', { err });
        thread.postMessage({ type: 'text', id: m.id, ok: false });
      },
    );
  });
  const bound = await new Promise<number>((resolve, reject) => {
    const onMessage = (m: { type: string; port?: number; message?: string }) => {
      if (m.type === 'listening') resolve(m.port!);
      else if (m.type === 'error') reject(new Error(`metrics listener: ${m.message}`));
      else return;
      thread.off('message', onMessage);
    };
    thread.on('message', onMessage);
    thread.once('error', reject);
  });
  // Neither keeps the process alive.
  thread.unref();
  const url = `http://${host}:${bound}/metrics`;
  log.info('metrics listening (own thread)', { url });
  return {
    url,
    async close() {
      clearInterval(beat);
      await thread.terminate();
    },
  };
}
