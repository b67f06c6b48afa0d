import { isRecord, readBody, sendJson } from './http';
import { hash32 } from './bytes';
import { acceptSubmission, findTask, phaseOf, pollFails, recordedBody, unixSeconds, type RouteCtx } from './tasks';
import type { SimTask } from './state';
import type { Route } from './router';

/**
 * Suno-style music behind a task proxy: `POST /suno/submit/music` returns a
 * task id; `GET /suno/fetch/{id}` (or `POST /suno/fetch {ids}`) reports the
 * task and, on SUCCESS, its two clips.
 */

export const CLIPS_PER_TASK = 2;

function sunoError(status: number, message: string): unknown {
  return { code: status >= 500 ? 'upstream_error' : 'error', message, data: null };
}

function uuid(prefix: string, n: number): string {
  return `${prefix}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

interface Clip {
  id: string;
  title: string;
  duration: number;
}

async function submit(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const b = body.kind === 'json' && isRecord(body.value) ? body.value : null;
  if (!b) return sendJson(ctx.res, 400, sunoError(400, 'request body must be a JSON object'));
  const prompt = typeof b.prompt === 'string' ? b.prompt : '';
  const description = typeof b.gpt_description_prompt === 'string' ? b.gpt_description_prompt : '';
  if (prompt.trim() === '' && description.trim() === '' && b.make_instrumental !== true) {
    return sendJson(ctx.res, 400, sunoError(400, 'prompt or gpt_description_prompt is required'));
  }
  const mv = typeof b.mv === 'string' && b.mv !== '' ? b.mv : 'chirp-v4';
  const task = await acceptSubmission(ctx, {
    api: 'suno', model: mv, body: recordedBody(body), async: true, weight: 'music',
    makeId: (n) => uuid(n.toString(16).padStart(8, '0'), n), errorBody: (s) => sunoError(s, 'simulated upstream error'),
  });
  if (!task) return;
  const count = task.faults.outputs === null ? CLIPS_PER_TASK : Math.min(CLIPS_PER_TASK, task.faults.outputs);
  const baseTitle = typeof b.title === 'string' && b.title !== '' ? b.title : (prompt || description).split(/\s+/).slice(0, 4).join(' ');
  const clips: Clip[] = Array.from({ length: count }, (_, i) => {
    const id = uuid(`c${task.id.slice(1, 8)}`, i + 1);
    const duration = task.faults.durationSeconds ?? 120 + (hash32(id) % 12000) / 100;
    return { id, title: baseTitle, duration };
  });
  task.plan = {
    clips,
    tags: typeof b.tags === 'string' ? b.tags : '',
    prompt,
    description,
    instrumental: b.make_instrumental === true,
  };
  if (task.faults.outcome === 'succeeded') {
    for (const c of clips) {
      ctx.state.addFile(`music/${task.id}/${c.id}.mp3`, { seed: c.id, seconds: c.duration }, task.dueAt);
      ctx.state.addFile(`music/${task.id}/${c.id}.png`, { seed: c.id }, task.dueAt);
    }
  }
  sendJson(ctx.res, 200, { code: 'success', message: '', data: task.id });
}

function view(ctx: RouteCtx, task: SimTask): Record<string, unknown> {
  const now = ctx.state.now();
  const ph = phaseOf(task, now);
  const p = task.plan as { clips: Clip[]; tags: string; prompt: string; description: string; instrumental: boolean };
  const span = task.dueAt - task.submittedAt;
  let status: string;
  let failReason = '';
  if (ph.state === 'queued') status = now - task.submittedAt < span * 0.1 ? 'SUBMITTED' : 'QUEUED';
  else if (ph.state === 'running') status = 'IN_PROGRESS';
  else if (ph.state === 'succeeded') status = 'SUCCESS';
  else {
    status = 'FAILURE';
    failReason = ph.state === 'expired' ? 'task expired: generation did not finish in time' : 'generation failed: simulated failure';
  }
  const clipStatus = status === 'SUCCESS' ? 'complete' : 'streaming';
  const showClips = status === 'SUCCESS' || (status === 'IN_PROGRESS' && ph.progress >= 50);
  const data = showClips
    ? p.clips.map((c) => {
        const done = status === 'SUCCESS';
        return {
          id: c.id,
          title: c.title,
          status: clipStatus,
          audio_url: done ? ctx.state.fileUrl(ctx.publicBaseUrl, `music/${task.id}/${c.id}.mp3`) : '',
          image_url: done ? ctx.state.fileUrl(ctx.publicBaseUrl, `music/${task.id}/${c.id}.png`) : '',
          image_large_url: done ? ctx.state.fileUrl(ctx.publicBaseUrl, `music/${task.id}/${c.id}.png`) : '',
          video_url: '',
          model_name: task.model,
          major_model_version: task.model.replace(/^chirp-/, ''),
          duration: done ? c.duration : null,
          tags: p.tags,
          created_at: new Date(task.submittedAt).toISOString(),
          metadata: {
            tags: p.tags,
            prompt: p.prompt,
            gpt_description_prompt: p.description,
            type: 'gen',
            duration: done ? c.duration : null,
            make_instrumental: p.instrumental,
          },
        };
      })
    : [];
  return {
    task_id: task.id,
    action: 'MUSIC',
    status,
    fail_reason: failReason,
    submit_time: unixSeconds(task.submittedAt),
    start_time: ph.startedAt === null ? 0 : unixSeconds(ph.startedAt),
    finish_time: ph.finishedAt === null ? 0 : unixSeconds(ph.finishedAt),
    progress: `${ph.progress}%`,
    data,
  };
}

function fetchOne(ctx: RouteCtx): void {
  const task = findTask(ctx, ctx.params[0], ['suno']);
  if (!task) return sendJson(ctx.res, 404, sunoError(404, 'task_not_exist'));
  if (pollFails(task)) return sendJson(ctx.res, 500, sunoError(500, 'upstream fetch failed'));
  sendJson(ctx.res, 200, { code: 'success', message: '', data: view(ctx, task) });
}

async function fetchMany(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const ids = body.kind === 'json' && isRecord(body.value) && Array.isArray(body.value.ids) ? body.value.ids.map(String) : [];
  const tasks = ids.map((id) => findTask(ctx, id, ['suno'])).filter((t): t is SimTask => t !== null);
  sendJson(ctx.res, 200, { code: 'success', message: '', data: tasks.map((t) => view(ctx, t)) });
}

export const sunoRoutes: Route[] = [
  { method: 'POST', pattern: /^\/suno\/submit\/music$/, handler: submit },
  { method: 'GET', pattern: /^\/suno\/fetch\/([^/]+)$/, handler: fetchOne },
  { method: 'POST', pattern: /^\/suno\/fetch$/, handler: fetchMany },
];
