import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMediaHandler, type MediaHandler } from '../../dev/simulator/media/index';
import type { MediaOptions } from '../../dev/simulator/media/state';

export const T0 = 1_750_000_000_000;

export interface Sim {
  base: string;
  /** `${base}/ch/${channel}` */
  ch: (channel: string) => string;
  media: MediaHandler;
  clock: { now: number; advance: (ms: number) => void };
  close: () => Promise<void>;
  post: (url: string, body: unknown, headers?: Record<string, string>) => Promise<Response>;
  control: {
    fault: (channel: string, fault: Record<string, unknown>, extra?: Record<string, unknown>) => Promise<void>;
    tasks: (channel?: string) => Promise<{ tasks: Array<Record<string, any>>; rejected: Array<Record<string, any>> }>;
  };
}

/** A bare server that strips /ch/{channel} and hands every request to the media handler. */
export async function startSim(opts: MediaOptions = {}): Promise<Sim> {
  const clock = { now: T0, advance: (ms: number) => { clock.now += ms; } };
  const media = createMediaHandler({ baseDelayMs: 1000, now: () => clock.now, ...opts });
  let base = '';
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', base);
    const m = /^\/ch\/([^/]+)(\/.*)?$/.exec(url.pathname);
    const handled = await media.handle(req, res, {
      channel: m ? m[1] : '',
      path: m ? m[2] ?? '/' : url.pathname,
      url,
      publicBaseUrl: base,
    });
    if (!handled) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no route');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return {
    base,
    ch: (channel) => `${base}/ch/${channel}`,
    media,
    clock,
    post,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
    control: {
      async fault(channel, fault, extra = {}) {
        const res = await post(`${base}/_control/media/faults`, { channel, fault, ...extra });
        if (res.status !== 200) throw new Error(`fault rejected: ${res.status} ${await res.text()}`);
      },
      async tasks(channel) {
        const res = await fetch(`${base}/_control/media/tasks${channel ? `?channel=${channel}` : ''}`);
        return (await res.json()) as { tasks: Array<Record<string, any>>; rejected: Array<Record<string, any>> };
      },
    },
  };
}

export const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export async function download(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

export function isPng(bytes: Buffer): boolean {
  return PNG_MAGIC.every((b, i) => bytes[i] === b) && bytes.subarray(12, 16).toString('ascii') === 'IHDR';
}

/** True when the request has not answered within `ms`. */
export async function staysOpen(p: Promise<Response>, ms = 300): Promise<boolean> {
  const timeout = new Promise<'open'>((r) => setTimeout(() => r('open'), ms));
  const outcome = await Promise.race([p.then(() => 'answered' as const, () => 'failed' as const), timeout]);
  return outcome === 'open';
}

/** A simulator owned by one test (fake clock, baseDelayMs 1000 unless given), closed on teardown. */
export async function simFor(t: { teardown: (fn: () => Promise<void>) => void }, opts: MediaOptions = {}): Promise<Sim> {
  const s = await startSim(opts);
  t.teardown(() => s.close());
  return s;
}

export async function json(res: Response | Promise<Response>): Promise<any> {
  return (await res).json();
}
