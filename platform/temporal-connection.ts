import { Connection, type ConnectionOptions } from '@temporalio/client';

/**
 * The Temporal client's connection without `AsyncLocalStorage`.
 *
 * The SDK's `Connection` passes a call's deadline, metadata and abort signal
 * to its gRPC call through an `AsyncLocalStorage`, and runs every workflow
 * service call with a namespace inside `withMetadata` (`run`). On Node 20 the
 * first `run` turns on async hooks for the whole process, for good: every
 * promise after it pays a hook. One readiness check or one task submission
 * made every later chat call of the gateway cost about 18 % more CPU
 * (258 -> 304 us a call at 64 clients, a second gateway without the check
 * unchanged; Node 24's AsyncContextFrame does not have the cost).
 *
 * The SDK reads that context synchronously, where `withDeadline`,
 * `withMetadata` or `withAbortSignal` calls the service method (protobufjs
 * calls the RPC implementation in the promise's executor), so a context held
 * only for the synchronous part of `run` carries the same values, with no
 * hook. The one rule it adds: a function given to `withDeadline`,
 * `withMetadata` or `withAbortSignal` calls the service method before its
 * first `await` (as `/readyz` does); a call made after an `await` in it would
 * go without the deadline. The SDK's own calls (the client's, `ensureConnected`)
 * are of that shape. `test/foundation/temporal-connection.test.ts` checks that a
 * deadline and metadata still reach the call and that no AsyncLocalStorage
 * context is entered.
 */
class SyncCallContext<T> {
  private current: T | undefined;

  getStore(): T | undefined {
    return this.current;
  }

  run<R>(store: T, fn: (...args: unknown[]) => R, ...args: unknown[]): R {
    const previous = this.current;
    this.current = store;
    try {
      return fn(...args);
    } finally {
      this.current = previous;
    }
  }

  disable(): void {
    this.current = undefined;
  }
}

/** The context of the connection `createCtorOptions` is building (it is synchronous: one at a time). */
let building: SyncCallContext<unknown> | undefined;

class HooklessConnection extends Connection {
  protected static override createCtorOptions(options: ConnectionOptions) {
    building = new SyncCallContext();
    try {
      return { ...super.createCtorOptions(options), callContextStorage: building as never };
    } finally {
      building = undefined;
    }
  }

  protected static override generateRPCImplementation(opts: Parameters<typeof Connection.generateRPCImplementation>[0]) {
    if (!building) throw new Error('HooklessConnection: an RPC implementation made outside createCtorOptions');
    return super.generateRPCImplementation({ ...opts, callContextStorage: building as never });
  }
}

/** A connection made on first use (the gateway's). */
export function lazyTemporalConnection(options: ConnectionOptions): Connection {
  return HooklessConnection.lazy(options);
}

/** A connection, connected. */
export function connectTemporalConnection(options: ConnectionOptions): Promise<Connection> {
  return HooklessConnection.connect(options);
}
