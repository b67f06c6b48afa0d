/**
 * The store client's options, shared by the process's mongoose connection (platform/mongo.ts) and the
 * plain driver clients of threads that write on their own (the knowledge compile thread): no mongoose here.
 */

/** A connection (or the monitor's check) whose handshake gets no answer for this long is given up and tried again (not shorter: a heartbeat that times out interrupts the operations in flight, and a loaded dev store can be slow). */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Server selection gives up after 10 s; maxPoolSize and connectTimeoutMS in the URL win (the chaos run
 * keeps FerretDB's writers few), else `pool` and CONNECT_TIMEOUT_MS. connectTimeoutMS (the driver's
 * default is 30 s) also bounds the monitor's handshake: a store restarting may accept the connection
 * before it answers, and a monitor stuck on that handshake leaves the process without a store for the
 * whole timeout while the store is back (the chaos run saw one gateway's operations fail server
 * selection for 20 s after a 1 s restart).
 */
export function storeClientOptions(url: string, pool: number): { serverSelectionTimeoutMS: number; maxPoolSize?: number; connectTimeoutMS?: number } {
  return {
    serverSelectionTimeoutMS: 10_000,
    ...(/[?&]maxPoolSize=/i.test(url) ? {} : { maxPoolSize: pool }),
    ...(/[?&]connectTimeoutMS=/i.test(url) ? {} : { connectTimeoutMS: CONNECT_TIMEOUT_MS }),
  };
}
