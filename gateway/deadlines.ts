/**
 * Deadlines for in-flight requests (the chat upstream deadline, the
 * settlement wait, the body read timeouts) without a timer per request: one
 * unref'd sweep fires every expired entry. A chat request's deadline is long
 * (180 s) and almost never reached, so arming and clearing a timer per request
 * is pure overhead; a Set insert and delete is all a request pays here. The
 * sweep runs every `tick` ms (a twentieth of the shortest deadline in use,
 * between 5 ms and 1 s), so a deadline fires at most one tick late.
 */
import { LiveList, type LiveEntry } from '../platform/live-list';

export interface Deadline {
  /** Forget the deadline (the request ended first). */
  clear(): void;
  /** Move the deadline to `ms` from now (an idle timeout seeing activity). */
  reset(ms: number): void;
}

interface Armed {
  at: number;
  fire: () => void;
}

const MIN_TICK_MS = 5;
const MAX_TICK_MS = 1_000;

/** Not a Set: platform/live-list.ts says why. */
const live = new LiveList<Armed>();
let sweeper: NodeJS.Timeout | undefined;
let tickMs = MAX_TICK_MS;

function sweep(): void {
  const now = performance.now();
  let due: Array<LiveEntry<Armed>> | undefined;
  live.forEach((e) => {
    if (e.value.at <= now) (due ??= []).push(e);
  });
  for (const e of due ?? []) {
    const armed = e.value;
    // A deadline fired before this one may have cleared it.
    if (armed && live.delete(e)) armed.fire();
  }
  if (live.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** Call `fire` once `ms` have passed, unless cleared first. */
export function deadlineIn(ms: number, fire: () => void): Deadline {
  const armed: Armed = { at: performance.now() + ms, fire };
  const entry = live.add(armed);
  const tick = Math.min(MAX_TICK_MS, Math.max(MIN_TICK_MS, Math.floor(ms / 20)));
  if (!sweeper || tick < tickMs) {
    if (sweeper) clearInterval(sweeper);
    tickMs = tick;
    sweeper = setInterval(sweep, tickMs);
    sweeper.unref();
  }
  return {
    clear: () => void live.delete(entry),
    reset: (next: number) => {
      armed.at = performance.now() + next;
    },
  };
}
