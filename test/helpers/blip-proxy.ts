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
  close(): Promise<void>;
}

export async function startBlipProxy(target: { host: string; port: number }): Promise<BlipProxy> {
  const open = new Set<net.Socket>();
  let isDown = false;
  const server = net.createServer((client) => {
    if (isDown) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
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
