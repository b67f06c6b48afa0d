import { Gauge } from 'prom-client';
import type { Model } from 'mongoose';
import type { TaskDocument } from '../../domain/media/task';
import type { Logger } from '../logger';
import { MAX_RUN_MS } from '../../domain/media/cadence';
import type { Metrics } from './registry';

/** The media tasks' collection (capabilities/media/store.ts), all these figures read. */
type Tasks = { Task: Model<TaskDocument> };

/** A scrape reads the store at most this often (several Prometheus servers, or a short scrape interval, cost no more). */
const STORE_READ_EVERY_MS = 10_000;
const IN_FLIGHT = ['queued', 'running'];

interface TaskFigures {
  byState: Array<{ family: string; state: string; n: number }>;
  oldest: Array<{ family: string; ageS: number }>;
  held: { n: number; nano: number };
}

/**
 * Figures of the whole deployment read from Mongo at scrape time (workers
 * export them; every worker reports the same values, so aggregate with max):
 * media tasks in flight by family and state, the age of each family's oldest
 * task in flight next to its run limit (the "stuck task" alert), and the
 * wallet holds those tasks keep open (each in-flight task holds its reservation).
 */
export function watchStore(m: Metrics, db: Tasks, log: Logger, opts: { readEveryMs?: number } = {}): void {
  const readEveryMs = opts.readEveryMs ?? STORE_READ_EVERY_MS;
  const registers = [m.registry];
  let cached: { at: number; figures: Promise<TaskFigures> } | undefined;
  const figures = (): Promise<TaskFigures> => {
    if (!cached || Date.now() - cached.at >= readEveryMs) {
      // A store that does not answer leaves these series out of this scrape; the rest is still served.
      cached = {
        at: Date.now(),
        figures: readTaskFigures(db).catch((err: unknown) => {
          log.warn('metrics: task figures not read', { err });
          cached = undefined;
          return { byState: [], oldest: [], held: { n: 0, nano: 0 } };
        }),
      };
    }
    return cached.figures;
  };
  new Gauge({
    name: 'gateway_media_tasks_in_flight',
    help: 'Media tasks not yet final, by family and state (queued, running); deployment-wide, read from the store',
    labelNames: ['family', 'state'] as const,
    registers,
    async collect() {
      this.reset();
      for (const r of (await figures()).byState) this.set({ family: r.family, state: r.state }, r.n);
    },
  });
  new Gauge({
    name: 'gateway_media_task_oldest_in_flight_seconds',
    help: 'Age of the oldest media task not yet final, by family (compare with gateway_media_task_run_limit_seconds)',
    labelNames: ['family'] as const,
    registers,
    async collect() {
      this.reset();
      for (const r of (await figures()).oldest) this.set({ family: r.family }, r.ageS);
    },
  });
  new Gauge({
    name: 'gateway_media_task_run_limit_seconds',
    help: 'How long a task of the family may run before the workflow expires it (families with a limit only; domain/media/cadence.ts)',
    labelNames: ['family'] as const,
    registers,
    collect() {
      for (const [family, ms] of Object.entries(MAX_RUN_MS)) if (ms !== null) this.set({ family }, ms / 1000);
    },
  });
  new Gauge({
    name: 'gateway_wallet_holds_open',
    help: 'Wallet reservations held by media tasks not yet settled; deployment-wide',
    registers,
    async collect() {
      this.set((await figures()).held.n);
    },
  });
  new Gauge({
    name: 'gateway_wallet_holds_open_credits',
    help: 'Credits held by media tasks not yet settled; deployment-wide',
    registers,
    async collect() {
      this.set((await figures()).held.nano / 1e9);
    },
  });
}

/**
 * Two aggregations with one accumulator each (FerretDB v1 computes only a
 * $group's first, and has no $min), and the oldest task per family in flight.
 */
async function readTaskFigures(db: Tasks): Promise<TaskFigures> {
  const inFlight = { state: { $in: IN_FLIGHT } };
  const match = { $match: inFlight };
  const [byState, held] = await Promise.all([
    db.Task.aggregate<{ _id: { kind: string; state: string }; n: number }>([match, { $group: { _id: { kind: '$kind', state: '$state' }, n: { $sum: 1 } } }]),
    db.Task.aggregate<{ _id: null; nano: number }>([match, { $group: { _id: null, nano: { $sum: '$reserved_nano' } } }]),
  ]);
  const families = [...new Set(byState.map((r) => r._id.kind))];
  const oldest = await Promise.all(
    families.map(async (family) => {
      const first = await db.Task.findOne({ ...inFlight, kind: family }, { created_at: 1 }).sort({ created_at: 1 }).lean<{ created_at: Date }>();
      return { family, createdAt: first?.created_at };
    }),
  );
  const now = Date.now();
  return {
    byState: byState.map((r) => ({ family: r._id.kind, state: r._id.state, n: r.n })),
    oldest: oldest.flatMap((r) => (r.createdAt ? [{ family: r.family, ageS: Math.max(0, now - new Date(r.createdAt).getTime()) / 1000 }] : [])),
    held: { n: byState.reduce((sum, r) => sum + r.n, 0), nano: held[0]?.nano ?? 0 },
  };
}
