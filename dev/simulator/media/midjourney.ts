import { isRecord, readBody, sendJson } from './http';
import { isDataUri } from './hints';
import { acceptSubmission, findTask, phaseOf, pollFails, recordedBody, type RouteCtx } from './tasks';
import type { SimTask } from './state';
import type { Route } from './router';

/**
 * Midjourney-proxy style fixed-grid imaging: `POST /mj/submit/imagine` then
 * `GET /mj/task/{id}/fetch`. Every imagine produces a 2x2 grid (`imageUrl`)
 * and its four images (`imageUrls`).
 */

export const GRID_SIZE = 4;

function mjError(status: number, code: number, description: string): unknown {
  return status >= 500 ? { timestamp: new Date(0).toISOString(), status, error: 'Internal Server Error', path: '' } : { code, description, result: null, properties: {} };
}

function gridKey(task: SimTask): string {
  return `mj/${task.id}/grid.png`;
}

function imageKey(task: SimTask, i: number): string {
  return `mj/${task.id}/${i}.png`;
}

async function imagine(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const b = body.kind === 'json' && isRecord(body.value) ? body.value : null;
  if (!b) return sendJson(ctx.res, 400, mjError(400, 4, 'request body must be a JSON object'));
  const prompt = b.prompt;
  if (typeof prompt !== 'string' || prompt.trim() === '') return sendJson(ctx.res, 400, mjError(400, 4, 'prompt can not be empty'));
  const base64Array = b.base64Array === undefined ? [] : b.base64Array;
  if (!Array.isArray(base64Array) || !base64Array.every((x) => typeof x === 'string' && isDataUri(x))) {
    return sendJson(ctx.res, 400, mjError(400, 4, 'base64 format error'));
  }
  const task = await acceptSubmission(ctx, {
    api: 'midjourney', model: typeof b.botType === 'string' ? b.botType : 'MID_JOURNEY', body: recordedBody(body), async: true, weight: 'midjourney',
    makeId: (n) => String(1748000000000000 + n), errorBody: (s) => mjError(s, 9, 'Simulated upstream error'),
  });
  if (!task) return;
  const count = task.faults.outputs === null ? GRID_SIZE : Math.min(GRID_SIZE, task.faults.outputs);
  task.plan = { prompt, count, state: typeof b.state === 'string' ? b.state : '' };
  if (task.faults.outcome === 'succeeded') {
    if (count > 0) ctx.state.addFile(gridKey(task), { seed: gridKey(task) }, task.dueAt);
    for (let i = 0; i < count; i++) ctx.state.addFile(imageKey(task, i), { seed: imageKey(task, i) }, task.dueAt);
  }
  sendJson(ctx.res, 200, { code: 1, description: 'Submit success', result: task.id, properties: { discordInstanceId: `sim-${ctx.channel}` } });
}

function buttons(task: SimTask): unknown[] {
  const out: unknown[] = [];
  for (const kind of ['upsample', 'variation'] as const) {
    for (let i = 1; i <= GRID_SIZE; i++) {
      out.push({ customId: `MJ::JOB::${kind}::${i}::${task.id}`, emoji: '', label: `${kind === 'upsample' ? 'U' : 'V'}${i}`, type: 2, style: 2 });
    }
  }
  out.push({ customId: `MJ::JOB::reroll::0::${task.id}::SOLO`, emoji: '🔄', label: '', type: 2, style: 2 });
  return out;
}

/** The fetch body: NOT_START, SUBMITTED, IN_PROGRESS, then SUCCESS or FAILURE. */
function view(ctx: RouteCtx, task: SimTask): Record<string, unknown> {
  const now = ctx.state.now();
  const ph = phaseOf(task, now);
  const p = task.plan as { prompt: string; count: number; state: string };
  const span = task.dueAt - task.submittedAt;
  let status: string;
  let failReason: string | null = null;
  if (ph.state === 'queued') status = now - task.submittedAt < span * 0.1 ? 'NOT_START' : 'SUBMITTED';
  else if (ph.state === 'running') status = 'IN_PROGRESS';
  else if (ph.state === 'succeeded') status = 'SUCCESS';
  else {
    status = 'FAILURE';
    failReason = ph.state === 'expired' ? 'task timeout' : '[Invalid parameter] Job failed: simulated failure';
  }
  const done = status === 'SUCCESS';
  return {
    id: task.id,
    action: 'IMAGINE',
    customId: '',
    botType: task.model,
    prompt: p.prompt,
    promptEn: p.prompt,
    description: status === 'NOT_START' ? 'Submit success' : `/imagine ${p.prompt}`,
    state: p.state,
    submitTime: task.submittedAt,
    startTime: ph.startedAt ?? 0,
    finishTime: ph.finishedAt ?? 0,
    imageUrl: done && p.count > 0 ? ctx.state.fileUrl(ctx.publicBaseUrl, gridKey(task)) : '',
    imageUrls: done ? Array.from({ length: p.count }, (_, i) => ctx.state.fileUrl(ctx.publicBaseUrl, imageKey(task, i))) : [],
    status,
    progress: status === 'FAILURE' ? '' : `${ph.progress}%`,
    failReason,
    buttons: done ? buttons(task) : [],
    properties: { finalPrompt: p.prompt, discordInstanceId: `sim-${task.channel}` },
  };
}

function fetchTask(ctx: RouteCtx): void {
  const task = findTask(ctx, ctx.params[0], ['midjourney']);
  if (!task) return sendJson(ctx.res, 404, mjError(404, 3, 'task not found'));
  if (pollFails(task)) return sendJson(ctx.res, 500, mjError(500, 0, ''));
  sendJson(ctx.res, 200, view(ctx, task));
}

async function listByCondition(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const ids = body.kind === 'json' && isRecord(body.value) && Array.isArray(body.value.ids) ? body.value.ids.map(String) : [];
  const tasks = ids.map((id) => findTask(ctx, id, ['midjourney'])).filter((t): t is SimTask => t !== null);
  sendJson(ctx.res, 200, tasks.map((t) => view(ctx, t)));
}

export const midjourneyRoutes: Route[] = [
  { method: 'POST', pattern: /^\/mj\/submit\/imagine$/, handler: imagine },
  { method: 'GET', pattern: /^\/mj\/task\/([^/]+)\/fetch$/, handler: fetchTask },
  { method: 'POST', pattern: /^\/mj\/task\/list-by-condition$/, handler: listByCondition },
];
