import { z } from 'zod';

/** One injected fault; see README "Fault API". */
export const faultSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('submit_status'), status: z.number().int().min(100).max(599), body: z.unknown().optional() }),
  z.object({ type: z.literal('submit_reset') }),
  z.object({ type: z.literal('submit_hang') }),
  z.object({ type: z.literal('fail') }),
  z.object({ type: z.literal('hang') }),
  z.object({ type: z.literal('expire') }),
  z.object({ type: z.literal('poll_fail'), count: z.number().int().min(1) }),
  z.object({ type: z.literal('fewer_outputs'), count: z.number().int().min(0) }),
  z.object({ type: z.literal('duration'), seconds: z.number().positive() }),
  z.object({ type: z.literal('delay'), ms: z.number().int().min(1).max(600_000) }),
]);
export type Fault = z.infer<typeof faultSchema>;

export const addFaultSchema = z.object({
  channel: z.string().min(1),
  fault: faultSchema,
  /** How many submissions the fault applies to; omitted = every one until cleared. */
  times: z.number().int().min(1).optional(),
  /** Only submissions whose path (after /ch/{channel}) contains this text. */
  match: z.string().min(1).optional(),
});
export type AddFault = z.infer<typeof addFaultSchema>;

export interface ArmedFault {
  fault: Fault;
  remaining: number | null;
  match: string | null;
}

const SUBMIT_LEVEL = new Set(['submit_status', 'submit_reset', 'submit_hang']);

/** Faults a task carries from its submission to its end. */
export interface TaskFaults {
  outcome: 'succeeded' | 'failed' | 'expired' | 'hang';
  pollFailures: number;
  outputs: number | null;
  durationSeconds: number | null;
  /** Extra wait before the submission answers (sync calls: before the result). */
  delayMs: number;
}

export type SubmitFault = Extract<Fault, { type: 'submit_status' | 'submit_reset' | 'submit_hang' }>;

/** Per-channel fault lists, consumed by submissions. */
export class FaultBook {
  private readonly byChannel = new Map<string, ArmedFault[]>();

  add(input: AddFault): void {
    const list = this.byChannel.get(input.channel) ?? [];
    list.push({ fault: input.fault, remaining: input.times ?? null, match: input.match ?? null });
    this.byChannel.set(input.channel, list);
  }

  clear(channel?: string): void {
    if (channel === undefined) this.byChannel.clear();
    else this.byChannel.delete(channel);
  }

  list(channel: string): ArmedFault[] {
    return this.byChannel.get(channel) ?? [];
  }

  private take(channel: string, path: string, accept: (f: Fault) => boolean): Fault[] {
    const list = this.byChannel.get(channel);
    if (!list) return [];
    const taken: Fault[] = [];
    for (const armed of list) {
      if (armed.match !== null && !path.includes(armed.match)) continue;
      if (!accept(armed.fault)) continue;
      taken.push(armed.fault);
      if (armed.remaining !== null) armed.remaining -= 1;
    }
    this.byChannel.set(channel, list.filter((a) => a.remaining === null || a.remaining > 0));
    return taken;
  }

  /** The first submit-level fault for this submission, consumed. */
  takeSubmitFault(channel: string, path: string): SubmitFault | null {
    let first: SubmitFault | null = null;
    this.take(channel, path, (f) => {
      if (first !== null || !SUBMIT_LEVEL.has(f.type)) return false;
      first = f as SubmitFault;
      return true;
    });
    return first;
  }

  /**
   * Task-level faults for a new task, each consumed once. `async` false (sync
   * endpoints) leaves `poll_fail` armed, as a sync call has no polls.
   */
  takeTaskFaults(channel: string, path: string, async: boolean): TaskFaults {
    const faults = this.take(channel, path, (f) => !SUBMIT_LEVEL.has(f.type) && (async || f.type !== 'poll_fail'));
    const out: TaskFaults = { outcome: 'succeeded', pollFailures: 0, outputs: null, durationSeconds: null, delayMs: 0 };
    for (const f of faults) {
      if (f.type === 'fail') out.outcome = 'failed';
      else if (f.type === 'expire') out.outcome = 'expired';
      else if (f.type === 'hang') out.outcome = 'hang';
      else if (f.type === 'poll_fail') out.pollFailures += f.count;
      else if (f.type === 'fewer_outputs') out.outputs = f.count;
      else if (f.type === 'duration') out.durationSeconds = f.seconds;
      else if (f.type === 'delay') out.delayMs += f.ms;
    }
    return out;
  }
}
