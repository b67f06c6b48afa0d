import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Counts the AsyncLocalStorage contexts entered (`run`, `enterWith`) in this process while `fn` runs, but
 * those of the storages in `ignore`. On
 * Node 20 the first one turns async hooks on for the process for good, and every promise after it costs
 * more (dev/bench/README.md, round 21); on Node 24 they are cheap, but the count is the same question on both.
 */
export async function alsRunsDuring(fn: () => Promise<void>, ignore: ReadonlySet<unknown> = new Set()): Promise<number> {
  const proto = AsyncLocalStorage.prototype as unknown as Record<'run' | 'enterWith', (...args: unknown[]) => unknown>;
  const { run, enterWith } = proto;
  let count = 0;
  proto.run = function (this: unknown, ...args: unknown[]) {
    if (!ignore.has(this)) count++;
    return run.apply(this, args);
  };
  proto.enterWith = function (this: unknown, ...args: unknown[]) {
    if (!ignore.has(this)) count++;
    return enterWith.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.run = run;
    proto.enterWith = enterWith;
  }
  return count;
}
