import { isRecord, readBody, sendJson, sleep } from './http';
import { durationHint, isHttpUrl, textSeconds } from './hints';
import { acceptSubmission, findTask, hangResponse, phaseOf, pollFails, recordedBody, unixSeconds, type RouteCtx } from './tasks';
import { CLIP_SCENES, CLIP_TEMPLATES, SCENE_FOR_VARIANT, findTemplate } from './clip-templates';
import { transcriptFor } from './transcript-text';
import type { SimTask } from './state';
import type { Route } from './router';

/**
 * Digital humans, clip editing and transcripts: no public vendor shape, so a
 * plain task API. See README "Digital humans".
 */

export const DH_KINDS = ['avatar_video', 'lipsync', 'motion', 'clip', 'avatar_create'] as const;
type Kind = (typeof DH_KINDS)[number];

/** Seconds assumed for a media URL without a `?dur=` hint. */
export const DEFAULT_MEDIA_SECONDS = 10;
export const DEFAULT_TRANSCRIPT_SECONDS = 30;
export const NEWS_DEFAULT_SECONDS = 60;
export const MAX_MATERIALS = 10;

function dhError(status: number, code: string, message: string): unknown {
  return { error: { code, message } };
}

function submitErrorBody(status: number): unknown {
  const code = status === 429 ? 'rate_limited' : status >= 500 ? 'internal_error' : status === 401 ? 'unauthorized' : 'invalid_request';
  return dhError(status, code, 'Simulated upstream error');
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function mediaSeconds(url: unknown): number {
  return durationHint(url) ?? DEFAULT_MEDIA_SECONDS;
}

/** Validates one kind's input; returns its output seconds (null for avatar_create) or an error message. */
function plan(kind: Kind, model: string, b: Record<string, unknown>): { seconds: number | null } | { error: string } {
  switch (kind) {
    case 'avatar_video': {
      if (!str(b.avatar)) return { error: 'avatar is required' };
      const audio = str(b.audio_url);
      const text = str(b.text);
      if (audio && text) return { error: 'give either audio_url or voice + text, not both' };
      if (audio) return isHttpUrl(audio) ? { seconds: mediaSeconds(audio) } : { error: 'audio_url must be a public http(s) URL' };
      if (!text || !str(b.voice)) return { error: 'audio_url or voice + text is required' };
      if ([...text].length > 10000) return { error: 'text exceeds 10000 characters' };
      if (typeof b.title === 'string' && [...b.title].length > 20) return { error: 'title exceeds 20 characters' };
      return { seconds: textSeconds(text) };
    }
    case 'lipsync': {
      const src = str(b.source_video_url);
      const audio = str(b.audio_url);
      if (!src || !isHttpUrl(src)) return { error: 'source_video_url must be a public http(s) URL' };
      if (!audio || !isHttpUrl(audio)) return { error: 'audio_url must be a public http(s) URL' };
      return { seconds: mediaSeconds(audio) };
    }
    case 'motion': {
      const src = str(b.source_video_url);
      if (!src || !isHttpUrl(src)) return { error: 'source_video_url must be a public http(s) URL' };
      const images = b.images;
      if (!Array.isArray(images) || images.length < 1 || images.length > 7 || !images.every((u) => typeof u === 'string' && isHttpUrl(u))) {
        return { error: 'images must hold 1 to 7 public image URLs' };
      }
      if (b.resolution !== undefined && !['fast', 'standard', 'max'].includes(String(b.resolution))) return { error: 'resolution must be fast, standard or max' };
      return { seconds: mediaSeconds(src) };
    }
    case 'clip': {
      const variant = model.includes('realman') ? 'realman' : model.includes('mixcut') ? 'mixcut' : model.includes('news') ? 'news' : null;
      if (!variant) return { error: `model ${model} is not a clip model (needs realman, mixcut or news in its id)` };
      const tpl = findTemplate(String(b.style_id ?? ''));
      if (!tpl) return { error: 'style_id does not name a clip template' };
      if (!SCENE_FOR_VARIANT[variant].includes(tpl.scene)) return { error: `template ${tpl.id} (${tpl.scene}) cannot be used with ${model}` };
      const materials = b.materials ?? [];
      if (!Array.isArray(materials) || materials.length > MAX_MATERIALS) return { error: `materials must be an array of at most ${MAX_MATERIALS}` };
      for (const m of materials) {
        if (!isRecord(m) || !['image', 'video'].includes(String(m.type)) || !isHttpUrl(String(m.file_url ?? ''))) return { error: 'each material needs type image or video and a public file_url' };
      }
      if (variant === 'realman') {
        const src = str(b.source_video_url);
        return src && isHttpUrl(src) ? { seconds: mediaSeconds(src) } : { error: 'source_video_url is required' };
      }
      if (variant === 'mixcut') {
        const audio = str(b.audio_url);
        if (!audio || !isHttpUrl(audio)) return { error: 'audio_url is required' };
        if (materials.length === 0) return { error: 'materials are required' };
        return { seconds: mediaSeconds(audio) };
      }
      if (!str(b.title)) return { error: 'title is required' };
      if (materials.length === 0) return { error: 'materials are required' };
      const d = b.duration === undefined ? NEWS_DEFAULT_SECONDS : Number(b.duration);
      if (!Number.isFinite(d)) return { error: 'duration must be a number' };
      return { seconds: Math.min(300, Math.max(5, d)) };
    }
    case 'avatar_create': {
      const name = str(b.name);
      if (!name || [...name].length > 20) return { error: 'name must be 1 to 20 characters' };
      const src = str(b.source_url);
      if (!src || !isHttpUrl(src)) return { error: 'source_url must be a public http(s) URL' };
      if (b.source_kind !== undefined && !['image', 'video'].includes(String(b.source_kind))) return { error: 'source_kind must be image or video' };
      return { seconds: null };
    }
  }
}

async function submit(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const b = body.kind === 'json' && isRecord(body.value) ? body.value : null;
  if (!b) return sendJson(ctx.res, 400, dhError(400, 'invalid_request', 'body must be a JSON object'));
  const kind = b.kind as Kind;
  if (!DH_KINDS.includes(kind)) return sendJson(ctx.res, 400, dhError(400, 'invalid_request', `kind must be one of ${DH_KINDS.join(', ')}`));
  const model = str(b.model);
  if (!model) return sendJson(ctx.res, 400, dhError(400, 'invalid_request', 'model is required'));
  const p = plan(kind, model, b);
  if ('error' in p) return sendJson(ctx.res, 400, dhError(400, 'invalid_request', p.error));
  const task = await acceptSubmission(ctx, {
    api: 'digital_human', model, body: recordedBody(body), async: true, weight: kind === 'avatar_create' ? 'avatar_create' : 'digital_human',
    makeId: (n) => `dht_${String(n).padStart(8, '0')}`, errorBody: submitErrorBody,
  });
  if (!task) return;
  const seconds = p.seconds === null ? null : task.faults.durationSeconds ?? p.seconds;
  const hasOutput = task.faults.outputs !== 0;
  task.plan = { kind, seconds, hasOutput, avatarId: kind === 'avatar_create' ? `av_${task.id.slice(4)}` : null };
  if (task.faults.outcome === 'succeeded' && hasOutput) {
    if (seconds !== null) ctx.state.addFile(`dh/${task.id}/video.mp4`, { seed: task.id, seconds }, task.dueAt);
    ctx.state.addFile(`dh/${task.id}/cover.png`, { seed: `${task.id}/cover` }, task.dueAt);
  }
  sendJson(ctx.res, 200, { task_id: task.id, status: 'pending', created_at: unixSeconds(task.submittedAt) });
}

function view(ctx: RouteCtx, task: SimTask): Record<string, unknown> {
  const ph = phaseOf(task, ctx.state.now());
  const p = task.plan as { kind: Kind; seconds: number | null; hasOutput: boolean; avatarId: string | null };
  const status = ph.state === 'queued' ? 'pending' : ph.state === 'running' ? 'processing' : ph.state;
  let result: Record<string, unknown> | null = null;
  if (ph.state === 'succeeded') {
    result = {};
    if (p.hasOutput) {
      if (p.seconds !== null) {
        result.video_url = ctx.state.fileUrl(ctx.publicBaseUrl, `dh/${task.id}/video.mp4`);
        result.duration_seconds = p.seconds;
      }
      if (p.avatarId) result.avatar_id = p.avatarId;
      result.cover_url = ctx.state.fileUrl(ctx.publicBaseUrl, `dh/${task.id}/cover.png`);
    }
  }
  const error =
    ph.state === 'failed' ? { code: 'generation_failed', message: 'The task failed: simulated failure.' }
    : ph.state === 'expired' ? { code: 'task_expired', message: 'The task did not finish in time.' }
    : null;
  return {
    task_id: task.id,
    kind: p.kind,
    model: task.model,
    status,
    progress: ph.progress,
    result,
    error,
    created_at: unixSeconds(task.submittedAt),
    updated_at: unixSeconds(ph.finishedAt ?? ph.startedAt ?? task.submittedAt),
  };
}

function get(ctx: RouteCtx): void {
  const task = findTask(ctx, ctx.params[0], ['digital_human']);
  if (!task) return sendJson(ctx.res, 404, dhError(404, 'not_found', `task ${ctx.params[0]} not found`));
  if (pollFails(task)) return sendJson(ctx.res, 500, dhError(500, 'internal_error', 'Simulated poll failure'));
  sendJson(ctx.res, 200, view(ctx, task));
}

async function transcript(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const b = body.kind === 'json' && isRecord(body.value) ? body.value : null;
  const url = b ? str(b.url) : null;
  if (!b || !url || !isHttpUrl(url)) return sendJson(ctx.res, 400, dhError(400, 'invalid_request', 'url must be a public http(s) link'));
  const task = await acceptSubmission(ctx, {
    api: 'transcript', model: 'transcript', body: recordedBody(body), async: false, weight: 'speech',
    makeId: (n) => `trs_${String(n).padStart(8, '0')}`, errorBody: submitErrorBody,
  });
  if (!task) return;
  if (task.faults.outcome === 'hang') return hangResponse(ctx);
  await sleep(ctx.state.transcriptDelayMs);
  if (task.faults.outcome === 'failed') return sendJson(ctx.res, 422, dhError(422, 'no_speech', 'No speech could be extracted from the video.'));
  if (task.faults.outcome === 'expired') return sendJson(ctx.res, 504, dhError(504, 'timeout', 'Transcript extraction timed out.'));
  const seconds = task.faults.durationSeconds ?? durationHint(url) ?? DEFAULT_TRANSCRIPT_SECONDS;
  let lang = typeof b.language === 'string' ? b.language : null;
  try {
    lang = lang ?? new URL(url).searchParams.get('lang');
  } catch {
    /* validated above */
  }
  sendJson(ctx.res, 200, transcriptFor(url, seconds, lang === 'en' ? 'en' : 'zh'));
}

function listTemplates(ctx: RouteCtx): void {
  const scene = ctx.url.searchParams.get('scene');
  if (scene !== null && !(CLIP_SCENES as readonly string[]).includes(scene)) {
    return sendJson(ctx.res, 400, dhError(400, 'invalid_request', `scene must be one of ${CLIP_SCENES.join(', ')}`));
  }
  const templates = CLIP_TEMPLATES.filter((t) => scene === null || t.scene === scene).map((t) => ({
    id: t.id, scene: t.scene, title: t.title, description: t.description,
    cover_url: ctx.state.fileUrl(ctx.publicBaseUrl, `templates/${t.id}.png`),
    has_title: t.has_title, has_persona: t.has_persona, duration_range: t.duration_range,
  }));
  sendJson(ctx.res, 200, { templates, total: templates.length });
}

function getTemplate(ctx: RouteCtx): void {
  const t = findTemplate(ctx.params[0]);
  if (!t) return sendJson(ctx.res, 404, dhError(404, 'not_found', `template ${ctx.params[0]} not found`));
  sendJson(ctx.res, 200, { ...t, cover_url: ctx.state.fileUrl(ctx.publicBaseUrl, `templates/${t.id}.png`) });
}

export const digitalHumanRoutes: Route[] = [
  { method: 'POST', pattern: /^\/dh\/v1\/tasks$/, handler: submit },
  { method: 'GET', pattern: /^\/dh\/v1\/tasks\/([^/]+)$/, handler: get },
  { method: 'POST', pattern: /^\/dh\/v1\/transcripts$/, handler: transcript },
  { method: 'GET', pattern: /^\/dh\/v1\/clip-templates$/, handler: listTemplates },
  { method: 'GET', pattern: /^\/dh\/v1\/clip-templates\/([^/]+)$/, handler: getTemplate },
];
