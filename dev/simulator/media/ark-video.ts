import { isRecord, readBody, sendJson } from './http';
import { hash32 } from './bytes';
import { promptFlag } from './hints';
import { acceptSubmission, findTask, phaseOf, pollFails, recordedBody, unixSeconds, type RouteCtx } from './tasks';
import type { SimTask } from './state';
import type { Route } from './router';

/**
 * Volcengine Ark content generation tasks (Seedance style video):
 * `POST /api/v3/contents/generations/tasks`, `GET .../tasks/{id}`,
 * `GET .../tasks` (list), `DELETE .../tasks/{id}` (cancel queued / delete finished).
 */

export const DEFAULT_VIDEO_SECONDS = 5;
const SHORT_SIDE: Record<string, number> = { '480p': 480, '720p': 720, '1080p': 1080, '2k': 1440, '4k': 2160 };

export function arkError(status: number, message = 'Simulated upstream error', param = ''): unknown {
  if (status === 429) return { error: { code: 'RateLimitExceeded.EndpointRPMExceeded', message, param, type: 'TooManyRequests' } };
  if (status === 404) return { error: { code: 'ResourceNotFound', message, param, type: 'NotFound' } };
  if (status >= 500) return { error: { code: 'InternalServiceError', message: 'The service encountered an unexpected internal error.', param, type: 'InternalServerError' } };
  return { error: { code: 'InvalidParameter', message, param, type: 'BadRequest' } };
}

/** Model ids reporting `progress`: any id containing "progress" plus the configured set. */
export function reportsProgress(ctx: RouteCtx, model: string): boolean {
  return model.includes('progress') || ctx.state.progressModels.has(model);
}

interface VideoPlan {
  duration: number;
  ratio: string;
  resolution: string;
  fps: number;
  seed: number;
  width: number;
  height: number;
  generateAudio: boolean | undefined;
  hasVideo: boolean;
}

function dims(resolution: string, ratio: string): { width: number; height: number } {
  const short = SHORT_SIDE[resolution] ?? 720;
  const m = /^(\d+):(\d+)$/.exec(ratio);
  const [a, b] = m ? [Number(m[1]), Number(m[2])] : [16, 9];
  const long = Math.round((short * Math.max(a, b)) / Math.min(a, b) / 2) * 2;
  return a >= b ? { width: long, height: short } : { width: short, height: long };
}

async function create(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const b = body.kind === 'json' && isRecord(body.value) ? body.value : null;
  if (!b) return sendJson(ctx.res, 400, arkError(400, 'The request body is not valid JSON.'));
  if (typeof b.model !== 'string' || b.model === '') return sendJson(ctx.res, 400, arkError(400, 'The parameter `model` specified in the request is missing.', 'model'));
  const content = b.content;
  if (!Array.isArray(content) || content.length === 0) return sendJson(ctx.res, 400, arkError(400, 'The parameter `content` specified in the request is missing.', 'content'));
  let text = '';
  for (const item of content) {
    if (!isRecord(item) || typeof item.type !== 'string') return sendJson(ctx.res, 400, arkError(400, 'Each `content` item needs a `type`.', 'content'));
    if (item.type === 'text') {
      if (typeof item.text !== 'string') return sendJson(ctx.res, 400, arkError(400, 'A text item needs `text`.', 'content.text'));
      text += `${item.text} `;
    } else if (['image_url', 'video_url', 'audio_url'].includes(item.type)) {
      const ref = item[item.type];
      if (!isRecord(ref) || typeof ref.url !== 'string' || ref.url === '') return sendJson(ctx.res, 400, arkError(400, `A ${item.type} item needs \`${item.type}.url\`.`, `content.${item.type}`));
    } else {
      return sendJson(ctx.res, 400, arkError(400, `The content type \`${item.type}\` is not supported.`, 'content.type'));
    }
  }
  if (!content.some((i) => isRecord(i) && (i.type === 'text' || i.type === 'image_url'))) {
    return sendJson(ctx.res, 400, arkError(400, 'The request needs a text or image_url content item.', 'content'));
  }
  const durRaw = b.duration ?? promptFlag(text, ['dur', 'duration']);
  const duration = durRaw === null || durRaw === undefined ? DEFAULT_VIDEO_SECONDS : Number(durRaw);
  if (!Number.isFinite(duration) || duration <= 0 || duration > 60) return sendJson(ctx.res, 400, arkError(400, `The parameter \`duration\` specified in the request is not valid: ${String(durRaw)}.`, 'duration'));
  const task = await acceptSubmission(ctx, {
    api: 'ark_video', model: b.model, body: recordedBody(body), async: true, weight: 'video',
    makeId: (n) => `cgt-20250601120000-${n.toString(36).padStart(5, '0')}`, errorBody: (s) => arkError(s),
  });
  if (!task) return;
  const ratio = String(b.ratio ?? promptFlag(text, ['rt', 'ratio']) ?? '16:9');
  const resolution = String(b.resolution ?? promptFlag(text, ['rs', 'resolution']) ?? '720p');
  const fps = Number(b.framespersecond ?? promptFlag(text, ['fps', 'framespersecond']) ?? 24);
  const seedRaw = b.seed ?? promptFlag(text, ['seed']);
  const plan: VideoPlan = {
    duration: task.faults.durationSeconds ?? duration,
    ratio,
    resolution,
    fps,
    seed: seedRaw === null || seedRaw === undefined || Number(seedRaw) === -1 ? hash32(task.id) % 100000 : Number(seedRaw),
    ...dims(resolution, ratio === 'adaptive' ? '16:9' : ratio),
    generateAudio: typeof b.generate_audio === 'boolean' ? b.generate_audio : undefined,
    hasVideo: task.faults.outputs !== 0,
  };
  task.plan = { ...plan };
  if (task.faults.outcome === 'succeeded' && plan.hasVideo) {
    ctx.state.addFile(`video/${task.id}/video.mp4`, { seed: task.id, seconds: plan.duration }, task.dueAt);
    ctx.state.addFile(`video/${task.id}/last_frame.png`, { seed: `${task.id}/last` }, task.dueAt);
  }
  sendJson(ctx.res, 200, { id: task.id });
}

function view(ctx: RouteCtx, task: SimTask): Record<string, unknown> {
  const now = ctx.state.now();
  const ph = phaseOf(task, now);
  const p = task.plan as unknown as VideoPlan;
  const out: Record<string, unknown> = { id: task.id, model: task.model, status: ph.state };
  if (ph.state === 'failed') out.error = { code: 'InternalServiceError', message: 'The video generation failed: simulated failure.' };
  else if (ph.state === 'expired') out.error = { code: 'TaskExpired', message: 'The task was not completed before its execution expiry.' };
  else out.error = null;
  if (ph.state === 'succeeded') {
    out.content = p.hasVideo
      ? {
          video_url: ctx.state.fileUrl(ctx.publicBaseUrl, `video/${task.id}/video.mp4`),
          last_frame_url: ctx.state.fileUrl(ctx.publicBaseUrl, `video/${task.id}/last_frame.png`),
        }
      : {};
    const tokens = p.hasVideo ? Math.floor((p.width * p.height * p.fps * p.duration) / 1024) : 0;
    out.usage = { completion_tokens: tokens, total_tokens: tokens };
  }
  if (reportsProgress(ctx, task.model)) out.progress = ph.progress;
  Object.assign(out, {
    created_at: unixSeconds(task.submittedAt),
    updated_at: unixSeconds(ph.finishedAt ?? (ph.startedAt !== null ? Math.min(now, task.dueAt) : task.submittedAt)),
    seed: p.seed,
    resolution: p.resolution,
    ratio: p.ratio,
    duration: p.duration,
    framespersecond: p.fps,
    service_tier: 'default',
    execution_expires_after: 172800,
  });
  if (p.generateAudio !== undefined) out.generate_audio = p.generateAudio;
  return out;
}

function get(ctx: RouteCtx): void {
  const task = findTask(ctx, ctx.params[0], ['ark_video']);
  if (!task) return sendJson(ctx.res, 404, arkError(404, `The specified task ${ctx.params[0]} is not found.`, 'id'));
  if (pollFails(task)) return sendJson(ctx.res, 500, arkError(500));
  sendJson(ctx.res, 200, view(ctx, task));
}

function list(ctx: RouteCtx): void {
  const q = ctx.url.searchParams;
  const pageNum = Math.max(1, Number(q.get('page_num') ?? 1) || 1);
  const pageSize = Math.min(500, Math.max(1, Number(q.get('page_size') ?? 10) || 10));
  const status = q.get('filter.status');
  const ids = q.getAll('filter.task_ids');
  const now = ctx.state.now();
  const all = [...ctx.state.tasks.values()]
    .filter((t) => t.api === 'ark_video' && t.channel === ctx.channel && !t.deleted)
    .filter((t) => ids.length === 0 || ids.includes(t.id))
    .filter((t) => status === null || phaseOf(t, now).state === status)
    .reverse();
  const items = all.slice((pageNum - 1) * pageSize, pageNum * pageSize).map((t) => view(ctx, t));
  sendJson(ctx.res, 200, { items, total: all.length });
}

/** Ark: a queued task is cancelled; a finished one is deleted; a running one cannot be touched. */
function remove(ctx: RouteCtx): void {
  const task = findTask(ctx, ctx.params[0], ['ark_video']);
  if (!task) return sendJson(ctx.res, 404, arkError(404, `The specified task ${ctx.params[0]} is not found.`, 'id'));
  const ph = phaseOf(task, ctx.state.now());
  if (ph.state === 'queued') task.cancelledAt = ctx.state.now();
  else if (ph.state === 'running') return sendJson(ctx.res, 409, { error: { code: 'OperationDenied.TaskRunning', message: 'A running task can be neither cancelled nor deleted.', param: 'id', type: 'Conflict' } });
  else task.deleted = true;
  sendJson(ctx.res, 200, {});
}

export const arkVideoRoutes: Route[] = [
  { method: 'POST', pattern: /^\/api\/v3\/contents\/generations\/tasks$/, handler: create },
  { method: 'GET', pattern: /^\/api\/v3\/contents\/generations\/tasks$/, handler: list },
  { method: 'GET', pattern: /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/, handler: get },
  { method: 'DELETE', pattern: /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/, handler: remove },
];
