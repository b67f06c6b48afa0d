import { MongoClient } from 'mongodb';
import { storeClientOptions } from '../../platform/store-client';
import { buildCollections, type BuildCollections } from './build-writes';

/**
 * The compile thread's own store client (the driver alone: no mongoose in
 * the thread), one per store URL, made at the thread's first write and kept
 * while the thread lives (piscina ends an idle thread after 30 s, and its
 * sockets with it). A small pool: one build writes at a time per thread.
 */
const clients = new Map<string, Promise<MongoClient>>();

export async function threadStore(url: string): Promise<BuildCollections> {
  let client = clients.get(url);
  if (!client) {
    const connecting = new MongoClient(url, storeClientOptions(url, 2)).connect();
    connecting.catch(() => clients.delete(url)); // the next write tries again
    clients.set(url, connecting);
    client = connecting;
  }
  return buildCollections((await client).db());
}

/** Closes the clients (the inline compute runs thread tasks on the caller's thread: its close() ends them). */
export async function closeThreadStores(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.all(all.map(async (c) => (await c.catch(() => null))?.close()));
}
