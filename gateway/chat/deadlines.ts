/**
 * Deadlines for in-flight chat requests without a timer per request: one
 * unref'd sweep fires every expired entry. A chat request's deadline is long
 * (180 s) and almost never reached, so arming and clearing a timer per request
 * is pure overhead; a Set insert and delete is all a request pays here. The
 * sweep runs every `tick` ms (a twentieth of the shortest deadline in use,
 * between 5 ms and 1 s), so a deadline fires at most one tick late.
 */
export interface Deadline {
  /** Forget the deadline (the request ended first). */
  clear(): void;
}

interface Entry extends Deadline {
  at: number;
  fire: () => void;
}

const MIN_TICK_MS = 5;
const MAX_TICK_MS = 1_000;

const live = new Set<Entry>();
let sweeper: NodeJS.Timeout | undefined;
let tickMs = MAX_TICK_MS;

function sweep(): void {
  const now = performance.now();
  for (const e of live) {
    if (e.at > now) continue;
    live.delete(e);
    e.fire();
  }
  if (live.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** Call `fire` once `ms` have passed, unless cleared first. */
export function deadlineIn(ms: number, fire: () => void): Deadline {
  const entry: Entry = {
    at: performance.now() + ms,
    fire,
    clear: () => void live.delete(entry),
  };
  live.add(entry);
  const tick = Math.min(MAX_TICK_MS, Math.max(MIN_TICK_MS, Math.floor(ms / 20)));
  if (!sweeper || tick < tickMs) {
    if (sweeper) clearInterval(sweeper);
    tickMs = tick;
    sweeper = setInterval(sweep, tickMs);
    sweeper.unref();
  }
  return entry;
}
