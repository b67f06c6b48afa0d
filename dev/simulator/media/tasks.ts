import type http from 'node:http';
import { flatHeaders, sendJson, sleep, type ParsedBody } from './http';
import type { MediaApi, MediaState, SimTask } from './state';

/** What every route handler receives. */
export interface RouteCtx {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  channel: string;
  /** Path after the /ch/{channel} prefix. */
  path: string;
  url: URL;
  publicBaseUrl: string;
  params: string[];
  state: MediaState;
}

/**
 * Task length in units of baseDelayMs, per API: a video takes five times as
 * long as an image. With baseDelayMs = 0 every task is done on its first poll.
 */
export const DURATION_WEIGHT: Record<string, number> = {
  image: 1,
  midjourney: 3,
  video: 5,
  music: 4,
  speech: 1,
  digital_human: 5,
  avatar_create: 10,
};

/** The first fifth of a task's span is spent queued, the rest running. */
export const QUEUED_SHARE = 0.2;

export type PhaseState = 'queued' | 'running' | 'succeeded' | 'failed' | 'expired' | 'cancelled';

export interface Phase {
  state: PhaseState;
  /** 0..100; 100 only once succeeded. */
  progress: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** Where a task stands at `now`: derived from its times, never from timers. */
export function phaseOf(task: SimTask, now: number): Phase {
  const span = task.dueAt - task.submittedAt;
  const startedAt = task.submittedAt + Math.round(span * QUEUED_SHARE);
  if (task.cancelledAt !== null) return { state: 'cancelled', progress: 0, startedAt: null, finishedAt: task.cancelledAt };
  const outcome = task.faults.outcome;
  if (now >= task.dueAt && outcome !== 'hang') {
    return { state: outcome, progress: outcome === 'succeeded' ? 100 : 99, startedAt, finishedAt: task.dueAt };
  }
  if (now < startedAt) return { state: 'queued', progress: 0, startedAt: null, finishedAt: null };
  const progress = span > 0 ? Math.min(99, Math.max(1, Math.floor(((now - task.submittedAt) / span) * 100))) : 50;
  return { state: 'running', progress, startedAt, finishedAt: null };
}

/** Counts a poll; true when an injected `poll_fail` says this poll answers 500. */
export function pollFails(task: SimTask): boolean {
  task.polls += 1;
  return task.polls <= task.faults.pollFailures;
}

export function recordedBody(body: ParsedBody): unknown {
  if (body.kind === 'json') return body.value;
  if (body.kind === 'multipart') {
    return {
      fields: body.fields,
      files: body.files.map((f) => ({ field: f.field, filename: f.filename, contentType: f.contentType, bytes: f.bytes })),
    };
  }
  return null;
}

export interface SubmissionSpec {
  api: MediaApi;
  model: string;
  body: unknown;
  async: boolean;
  /** Key into DURATION_WEIGHT. */
  weight: keyof typeof DURATION_WEIGHT;
  makeId: (n: number) => string;
  /** Body sent for a `submit_status` fault without its own body. */
  errorBody: (status: number) => unknown;
}

/**
 * Applies submit-level faults, then records a task with its task-level faults
 * (waiting out a `delay` fault). Returns null when a fault already answered
 * (or dropped) the request.
 */
export async function acceptSubmission(ctx: RouteCtx, spec: SubmissionSpec): Promise<SimTask | null> {
  const { state, channel, path, req, res } = ctx;
  const now = state.now();
  const submitFault = state.faults.takeSubmitFault(channel, path);
  if (submitFault) {
    state.rejected.push({ channel, method: req.method ?? 'POST', path, fault: submitFault.type, at: now });
    if (submitFault.type === 'submit_status') {
      sendJson(res, submitFault.status, submitFault.body ?? spec.errorBody(submitFault.status));
    } else if (submitFault.type === 'submit_reset') {
      req.socket.destroy();
    } else {
      state.hung.add(res);
      res.on('close', () => state.hung.delete(res));
    }
    return null;
  }
  const faults = state.faults.takeTaskFaults(channel, path, spec.async);
  const task: SimTask = {
    id: spec.makeId(state.next()),
    api: spec.api,
    channel,
    method: req.method ?? 'POST',
    path,
    headers: flatHeaders(req),
    body: spec.body,
    model: spec.model,
    async: spec.async,
    submittedAt: now,
    dueAt: now + state.baseDelayMs * (DURATION_WEIGHT[spec.weight] ?? 1),
    faults,
    polls: 0,
    cancelledAt: null,
    deleted: false,
    plan: {},
  };
  state.tasks.set(task.id, task);
  if (faults.delayMs > 0) await sleep(faults.delayMs);
  return task;
}

/** A task of `api` visible to `channel` (another channel's task is a 404, as at a vendor). */
export function findTask(ctx: RouteCtx, id: string, apis: MediaApi[]): SimTask | null {
  const task = ctx.state.tasks.get(id);
  if (!task || task.deleted || task.channel !== ctx.channel || !apis.includes(task.api)) return null;
  return task;
}

/** Leaves the response open forever (sync `hang` fault); reset closes it. */
export function hangResponse(ctx: RouteCtx): void {
  ctx.state.hung.add(ctx.res);
  ctx.res.on('close', () => ctx.state.hung.delete(ctx.res));
}

export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
