import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP relay in front of a store (Redis, the Mongo-wire store) that a test
 * can take down and bring back: `down()` resets every open connection and
 * refuses new ones until `up()`, as a store restart or a network partition
 * looks from the client. The store itself (shared by other test files) is
 * never touched.
 */
export interface BlipProxy {
  url(scheme: string, path?: string): string;
  down(): void;
  up(): void;
  /** Down for `ms`, then up again. */
  blip(ms: number): Promise<void>;
  /**
   * From now on the connections open now lose what flows one way: `requests` never reach the store,
   * `answers` never reach the client (the store did the work). New connections are not affected.
   */
  drop(direction: 'requests' | 'answers'): void;
  /** A store restart as the client sees it: every open connection reset, new ones accepted at once. */
  restart(): void;
  close(): Promise<void>;
}

export async function startBlipProxy(target: { host: string; port: number }): Promise<BlipProxy> {
  const open = new Set<net.Socket>();
  let isDown = false;
  const pairs = new Map<net.Socket, { requests: boolean; answers: boolean }>();
  const server = net.createServer((client) => {
    if (isDown) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const end = () => {
      pairs.delete(client);
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    const pair = { requests: false, answers: false };
    pairs.set(client, pair);
    client.on('data', (chunk: Buffer) => {
      if (!pair.requests) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!pair.answers) client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const proxy: BlipProxy = {
    url: (scheme, path = '') => `${scheme}://127.0.0.1:${port}${path}`,
    down() {
      isDown = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    up() {
      isDown = false;
    },
    drop(direction) {
      for (const pair of pairs.values()) pair[direction] = true;
    },
    restart() {
      proxy.down();
      proxy.up();
    },
    async blip(ms) {
      proxy.down();
      await new Promise((r) => setTimeout(r, ms));
      proxy.up();
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  return proxy;
}
