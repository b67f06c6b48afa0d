import { isRecord, readBody, sendBytes, sendJson, sleep } from './http';
import { makeMp3 } from './bytes';
import { isHttpUrl, CHARS_PER_SECOND } from './hints';
import { acceptSubmission, findTask, hangResponse, phaseOf, pollFails, recordedBody, unixSeconds, DURATION_WEIGHT, type RouteCtx } from './tasks';
import { SYSTEM_VOICES, VOICE_ID_PATTERN } from './minimax-voices';
import type { SimTask } from './state';
import type { Route } from './router';

/**
 * MiniMax speech: T2A v2 (sync, hex or url output, optional SSE stream),
 * T2A async v2 with its query and file retrieval, file upload, voice clone
 * and the voice list. Errors follow MiniMax: HTTP 200 with a non-zero
 * `base_resp.status_code`.
 */

export const SYNC_TEXT_LIMIT = 10000;
export const ASYNC_TEXT_LIMIT = 50000;

const OK = { status_code: 0, status_msg: 'success' };

function baseError(code: number, msg: string): { base_resp: { status_code: number; status_msg: string } } {
  return { base_resp: { status_code: code, status_msg: msg } };
}

function submitErrorBody(status: number): unknown {
  return status === 429 ? baseError(1002, 'rate limit') : status === 401 ? baseError(1004, 'not authorized') : baseError(1000, 'unknown error');
}

function traceId(task: SimTask): string {
  return task.id.replace(/\D/g, '').padStart(32, '0').slice(-32);
}

/** Speech length: 15 characters a second (or the `duration` fault). */
function audioMs(task: SimTask, chars: number): number {
  return Math.round((task.faults.durationSeconds ?? Math.max(1, chars / CHARS_PER_SECOND)) * 1000);
}

interface Speech {
  model: string;
  text: string;
  voiceId: string;
  format: string;
  sampleRate: number;
  bitrate: number;
  channel: number;
}

function knownVoice(ctx: RouteCtx, voiceId: string): boolean {
  return SYSTEM_VOICES.some((v) => v.voice_id === voiceId) || (ctx.state.voices.get(ctx.channel)?.has(voiceId) ?? false);
}

/** Validates a T2A body; answers MiniMax-style and returns null when invalid. */
function parseSpeech(ctx: RouteCtx, b: Record<string, unknown> | null, limit: number, allowFile: boolean): Speech | null {
  const bad = (msg: string): null => {
    sendJson(ctx.res, 200, baseError(2013, `invalid params, ${msg}`));
    return null;
  };
  if (!b) return bad('body must be a JSON object');
  if (typeof b.model !== 'string' || b.model === '') return bad('model is required');
  let text = typeof b.text === 'string' ? b.text : '';
  if (allowFile && text === '' && b.text_file_id !== undefined) {
    const f = ctx.state.minimaxFiles.get(Number(b.text_file_id));
    if (!f || f.channel !== ctx.channel) return bad('text_file_id not found');
    text = 'x'.repeat(f.bytes);
  }
  if (text === '') return bad('text is required');
  if ([...text].length > limit) return bad(`text length exceeds ${limit} characters`);
  const vs = isRecord(b.voice_setting) ? b.voice_setting : {};
  const voiceId = typeof vs.voice_id === 'string' ? vs.voice_id : '';
  if (voiceId === '' && !Array.isArray(b.timber_weights)) return bad('voice_setting.voice_id is required');
  if (voiceId !== '' && !knownVoice(ctx, voiceId)) {
    sendJson(ctx.res, 200, baseError(2054, `voice id not exist: ${voiceId}`));
    return null;
  }
  const as = isRecord(b.audio_setting) ? b.audio_setting : {};
  return {
    model: b.model,
    text,
    voiceId,
    format: typeof as.format === 'string' ? as.format : 'mp3',
    sampleRate: Number(as.sample_rate ?? as.audio_sample_rate ?? 32000),
    bitrate: Number(as.bitrate ?? 128000),
    channel: Number(as.channel ?? 1),
  };
}

function extraInfo(task: SimTask, s: Speech, size: number): Record<string, unknown> {
  const chars = [...s.text].length;
  return {
    audio_length: audioMs(task, chars),
    audio_sample_rate: s.sampleRate,
    audio_size: size,
    bitrate: s.bitrate,
    word_count: s.text.split(/\s+/).filter(Boolean).length,
    invisible_character_ratio: 0,
    usage_characters: chars,
    audio_format: s.format,
    audio_channel: s.channel,
  };
}

async function t2aSync(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const b = body.kind === 'json' && isRecord(body.value) ? body.value : null;
  const s = parseSpeech(ctx, b, SYNC_TEXT_LIMIT, false);
  if (!s || !b) return;
  const task = await acceptSubmission(ctx, {
    api: 'minimax_t2a', model: s.model, body: recordedBody(body), async: false, weight: 'speech',
    makeId: (n) => `t2a-${String(n).padStart(6, '0')}`, errorBody: submitErrorBody,
  });
  if (!task) return;
  if (task.faults.outcome === 'hang') return hangResponse(ctx);
  await sleep(ctx.state.baseDelayMs * DURATION_WEIGHT.speech * 0.5);
  if (task.faults.outcome === 'failed') return sendJson(ctx.res, 200, { ...baseError(1000, 'unknown error'), trace_id: traceId(task) });
  if (task.faults.outcome === 'expired') return sendJson(ctx.res, 200, { ...baseError(1001, 'request timeout'), trace_id: traceId(task) });
  const ms = audioMs(task, [...s.text].length);
  const key = `speech/${task.id}/audio.${s.format === 'wav' ? 'wav' : 'mp3'}`;
  const audio = makeMp3(key, ms / 1000);
  ctx.state.addFile(key, { seed: key, seconds: ms / 1000 }, ctx.state.now());
  const payload = b.output_format === 'url' ? ctx.state.fileUrl(ctx.publicBaseUrl, key) : audio.toString('hex');
  const final = { data: { audio: payload, status: 2, subtitle_file: '' }, extra_info: extraInfo(task, s, audio.length), trace_id: traceId(task), base_resp: OK };
  if (b.stream !== true) return sendJson(ctx.res, 200, final);
  ctx.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const hex = audio.toString('hex');
  const half = Math.floor(hex.length / 4) * 2;
  for (const chunk of [hex.slice(0, half), hex.slice(half)]) {
    ctx.res.write(`data: ${JSON.stringify({ data: { audio: chunk, status: 1 }, trace_id: traceId(task), base_resp: OK })}\n\n`);
  }
  ctx.res.end(`data: ${JSON.stringify({ ...final, data: { audio: hex, status: 2 } })}\n\n`);
}

async function t2aAsync(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const b = body.kind === 'json' && isRecord(body.value) ? body.value : null;
  const s = parseSpeech(ctx, b, ASYNC_TEXT_LIMIT, true);
  if (!s) return;
  const task = await acceptSubmission(ctx, {
    api: 'minimax_t2a_async', model: s.model, body: recordedBody(body), async: true, weight: 'speech',
    makeId: (n) => String(95157322510000 + n), errorBody: submitErrorBody,
  });
  if (!task) return;
  const fileId = Number(task.id) + 1000000;
  const ms = audioMs(task, [...s.text].length);
  const key = `speech/${task.id}/audio.mp3`;
  task.plan = { fileId, ms, key, chars: [...s.text].length };
  ctx.state.minimaxFiles.set(fileId, { channel: ctx.channel, filename: 'audio.mp3', purpose: 't2a_async', bytes: makeMp3(key, ms / 1000).length, createdAt: task.dueAt, key });
  if (task.faults.outcome === 'succeeded') ctx.state.addFile(key, { seed: key, seconds: ms / 1000 }, task.dueAt);
  sendJson(ctx.res, 200, { task_id: Number(task.id), task_token: `sim-token-${task.id}`, file_id: fileId, usage_characters: [...s.text].length, base_resp: OK });
}

function t2aQuery(ctx: RouteCtx): void {
  const id = ctx.url.searchParams.get('task_id') ?? '';
  const task = findTask(ctx, id, ['minimax_t2a_async']);
  if (!task) return sendJson(ctx.res, 200, baseError(2013, 'invalid params, task not found'));
  if (pollFails(task)) return sendJson(ctx.res, 500, baseError(1000, 'unknown error'));
  const ph = phaseOf(task, ctx.state.now());
  const status = ph.state === 'succeeded' ? 'Success' : ph.state === 'failed' ? 'Failed' : ph.state === 'expired' ? 'Expired' : 'Processing';
  sendJson(ctx.res, 200, { task_id: Number(task.id), status, file_id: (task.plan as { fileId: number }).fileId, base_resp: OK });
}

/** A file of this channel whose bytes exist now, or null. */
function readyFile(ctx: RouteCtx): { id: number; f: NonNullable<ReturnType<RouteCtx['state']['minimaxFiles']['get']>> } | null {
  const id = Number(ctx.url.searchParams.get('file_id'));
  const f = ctx.state.minimaxFiles.get(id);
  const stored = f ? ctx.state.files.get(f.key) : undefined;
  if (!f || f.channel !== ctx.channel || !stored || stored.availableAt > ctx.state.now()) return null;
  return { id, f };
}

function fileRetrieve(ctx: RouteCtx): void {
  const hit = readyFile(ctx);
  if (!hit) return sendJson(ctx.res, 200, baseError(2013, 'invalid params, file not found'));
  const { id, f } = hit;
  sendJson(ctx.res, 200, {
    file: { file_id: id, bytes: f.bytes, created_at: unixSeconds(f.createdAt), filename: f.filename, purpose: f.purpose, download_url: ctx.state.fileUrl(ctx.publicBaseUrl, f.key) },
    base_resp: OK,
  });
}

function fileContent(ctx: RouteCtx): void {
  const hit = readyFile(ctx);
  if (!hit) return sendJson(ctx.res, 200, baseError(2013, 'invalid params, file not found'));
  const stored = ctx.state.files.get(hit.f.key);
  if (!stored) return sendJson(ctx.res, 200, baseError(2013, 'invalid params, file not found'));
  sendBytes(ctx.res, 200, stored.contentType, stored.make());
}

async function fileUpload(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  if (body.kind !== 'multipart') return sendJson(ctx.res, 200, baseError(2013, 'invalid params, multipart/form-data required'));
  const purpose = typeof body.fields.purpose === 'string' ? body.fields.purpose : '';
  const file = body.files.find((f) => f.field === 'file');
  if (!['voice_clone', 'prompt_audio', 't2a_async_input'].includes(purpose)) return sendJson(ctx.res, 200, baseError(2013, 'invalid params, purpose'));
  if (!file) return sendJson(ctx.res, 200, baseError(2013, 'invalid params, file is required'));
  const task = await acceptSubmission(ctx, {
    api: 'minimax_file', model: purpose, body: recordedBody(body), async: false, weight: 'speech',
    makeId: (n) => String(300000000000 + n), errorBody: submitErrorBody,
  });
  if (!task) return;
  const fileId = Number(task.id);
  const key = `uploads/${fileId}/${file.filename.replace(/[^\w.-]/g, '_') || 'file'}`;
  ctx.state.addUpload(key, file.contentType, file.data);
  const now = ctx.state.now();
  ctx.state.minimaxFiles.set(fileId, { channel: ctx.channel, filename: file.filename, purpose, bytes: file.bytes, createdAt: now, key });
  sendJson(ctx.res, 200, { file: { file_id: fileId, bytes: file.bytes, created_at: unixSeconds(now), filename: file.filename, purpose }, base_resp: OK });
}

async function voiceClone(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const b = body.kind === 'json' && isRecord(body.value) ? body.value : null;
  const bad = (code: number, msg: string): void => sendJson(ctx.res, 200, baseError(code, msg));
  if (!b) return bad(2013, 'invalid params, body must be a JSON object');
  const voiceId = typeof b.voice_id === 'string' ? b.voice_id : '';
  if (!VOICE_ID_PATTERN.test(voiceId)) return bad(2013, 'invalid params, voice_id must be 8-256 characters, start with a letter and use letters, digits, - and _');
  if (b.file_id !== undefined) {
    const f = ctx.state.minimaxFiles.get(Number(b.file_id));
    if (!f || f.channel !== ctx.channel) return bad(2013, 'invalid params, file_id not found');
  } else if (typeof b.audio_url !== 'string' || !isHttpUrl(b.audio_url)) {
    return bad(2013, 'invalid params, file_id or audio_url is required');
  }
  if (knownVoice(ctx, voiceId)) return bad(2039, 'voice clone voice id duplicate');
  const task = await acceptSubmission(ctx, {
    api: 'minimax_voice_clone', model: typeof b.model === 'string' ? b.model : '', body: recordedBody(body), async: false, weight: 'speech',
    makeId: (n) => `clone-${String(n).padStart(6, '0')}`, errorBody: submitErrorBody,
  });
  if (!task) return;
  if (task.faults.outcome === 'hang') return hangResponse(ctx);
  if (task.faults.outcome !== 'succeeded') return bad(1000, 'unknown error');
  const voices = ctx.state.voices.get(ctx.channel) ?? new Map();
  voices.set(voiceId, { voice_id: voiceId, created_time: new Date(ctx.state.now()).toISOString().slice(0, 10), description: [] });
  ctx.state.voices.set(ctx.channel, voices);
  let demo = '';
  if (typeof b.text === 'string' && b.text !== '' && typeof b.model === 'string') {
    const key = `speech/${task.id}/demo.mp3`;
    ctx.state.addFile(key, { seed: key, seconds: Math.max(1, b.text.length / CHARS_PER_SECOND) }, ctx.state.now());
    demo = ctx.state.fileUrl(ctx.publicBaseUrl, key);
  }
  sendJson(ctx.res, 200, { input_sensitive: false, input_sensitive_type: 0, demo_audio: demo, base_resp: OK });
}

async function getVoice(ctx: RouteCtx): Promise<void> {
  let type = ctx.url.searchParams.get('voice_type') ?? 'all';
  if (ctx.req.method === 'POST') {
    const body = await readBody(ctx.req);
    if (body.kind === 'json' && isRecord(body.value) && typeof body.value.voice_type === 'string') type = body.value.voice_type;
  }
  if (!['system', 'voice_cloning', 'voice_generation', 'all'].includes(type)) return sendJson(ctx.res, 200, baseError(2013, 'invalid params, voice_type'));
  const out: Record<string, unknown> = {};
  if (type === 'system' || type === 'all') out.system_voice = SYSTEM_VOICES;
  if (type === 'voice_cloning' || type === 'all') out.voice_cloning = [...(ctx.state.voices.get(ctx.channel)?.values() ?? [])];
  if (type === 'voice_generation' || type === 'all') out.voice_generation = [];
  sendJson(ctx.res, 200, { ...out, base_resp: OK });
}

export const minimaxRoutes: Route[] = [
  { method: 'POST', pattern: /^\/v1\/t2a_v2$/, handler: t2aSync },
  { method: 'POST', pattern: /^\/v1\/t2a_async_v2$/, handler: t2aAsync },
  { method: 'GET', pattern: /^\/v1\/query\/t2a_async_query_v2$/, handler: t2aQuery },
  { method: 'POST', pattern: /^\/v1\/files\/upload$/, handler: fileUpload },
  { method: 'GET', pattern: /^\/v1\/files\/retrieve$/, handler: fileRetrieve },
  { method: 'GET', pattern: /^\/v1\/files\/retrieve_content$/, handler: fileContent },
  { method: 'POST', pattern: /^\/v1\/voice_clone$/, handler: voiceClone },
  { method: 'GET', pattern: /^\/v1\/get_voice$/, handler: getVoice },
  { method: 'POST', pattern: /^\/v1\/get_voice$/, handler: getVoice },
];
