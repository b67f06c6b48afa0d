import { isRecord, readBody, sendJson, sleep, type ParsedBody } from './http';
import { isDataUri, isHttpUrl, parseSize } from './hints';
import { makePng } from './bytes';
import {
  acceptSubmission, findTask, hangResponse, phaseOf, pollFails, recordedBody, unixSeconds, DURATION_WEIGHT,
  type RouteCtx,
} from './tasks';
import type { SimTask } from './state';
import type { Route } from './router';

/**
 * OpenAI Images API (`/v1/images/generations`, `/v1/images/edits`), with the
 * `size` and `usage.generated_images` fields OpenAI-compatible vendors such as
 * Ark Seedream add, plus an async task variant of the same request.
 */

type Status = 400 | 404 | 429 | 500 | 504;

export function openAiError(status: number, message: string, param: string | null = null, code: string | null = null): unknown {
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param, code } };
}

function fail(ctx: RouteCtx, status: Status, message: string, param: string | null = null, code: string | null = null): void {
  sendJson(ctx.res, status, openAiError(status, message, param, code));
}

interface ImageRequest {
  model: string;
  prompt: string;
  n: number;
  size: string;
  responseFormat: 'url' | 'b64_json';
  refs: number;
  endpoint: 'generations' | 'edits';
}

/** Minimum pixel area by model id substring: "2k" models need 1920x1920, "1k" models 960x960. */
export const MIN_AREA: Array<[string, number]> = [
  ['2k', 1920 * 1920],
  ['1k', 960 * 960],
];

function field(body: ParsedBody, name: string): unknown {
  if (body.kind === 'json' && isRecord(body.value)) return body.value[name];
  if (body.kind === 'multipart') return body.fields[name] ?? body.fields[`${name}[]`];
  return undefined;
}

/** Validates like the vendor; returns the request or answers 400 and returns null. */
function parseImageRequest(ctx: RouteCtx, body: ParsedBody, endpoint: 'generations' | 'edits' | null): ImageRequest | null {
  if (body.kind === 'invalid' || body.kind === 'empty') {
    fail(ctx, 400, body.kind === 'invalid' ? body.reason : 'request body is required');
    return null;
  }
  const prompt = field(body, 'prompt');
  if (typeof prompt !== 'string' || prompt.trim() === '') {
    fail(ctx, 400, "Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter');
    return null;
  }
  const modelRaw = field(body, 'model');
  const model = typeof modelRaw === 'string' && modelRaw !== '' ? modelRaw : 'gpt-image-1';
  const nRaw = field(body, 'n');
  const n = nRaw === undefined ? 1 : Number(nRaw);
  if (!Number.isInteger(n) || n < 1 || n > 10) {
    fail(ctx, 400, `Invalid value for 'n': ${String(nRaw)}. Must be an integer between 1 and 10.`, 'n', 'invalid_value');
    return null;
  }
  const sizeRaw = field(body, 'size');
  const size = sizeRaw === undefined || sizeRaw === 'auto' ? '1024x1024' : String(sizeRaw);
  const dims = parseSize(size);
  if (!dims) {
    fail(ctx, 400, `Invalid value for 'size': '${size}'. Expected '<width>x<height>' or 'auto'.`, 'size', 'invalid_value');
    return null;
  }
  const min = MIN_AREA.find(([k]) => model.includes(k));
  if (min && dims.width * dims.height < min[1]) {
    const side = Math.round(Math.sqrt(min[1]));
    fail(ctx, 400, `The requested size ${size} is too small for model ${model}; at least ${side}x${side} pixels are required.`, 'size', 'invalid_value');
    return null;
  }
  const rf = field(body, 'response_format') ?? 'url';
  if (rf !== 'url' && rf !== 'b64_json') {
    fail(ctx, 400, `Invalid value for 'response_format': '${String(rf)}'. Supported values are: 'url' and 'b64_json'.`, 'response_format', 'invalid_value');
    return null;
  }
  const refs: string[] = [];
  for (const name of ['image', 'image_urls']) {
    const v = field(body, name);
    if (typeof v === 'string') refs.push(v);
    else if (Array.isArray(v)) refs.push(...v.map(String));
  }
  for (const ref of refs) {
    if (!isHttpUrl(ref) && !isDataUri(ref)) {
      fail(ctx, 400, 'Each image reference must be an http(s) URL or a data:image/...;base64 URI.', 'image', 'invalid_image');
      return null;
    }
    if (isDataUri(ref) && model.includes('url-only')) {
      fail(ctx, 400, `Model ${model} accepts only public image URLs.`, 'image', 'invalid_image');
      return null;
    }
  }
  const files = body.kind === 'multipart' ? body.files.filter((f) => f.field === 'image' || f.field === 'image[]').length : 0;
  const ep = endpoint ?? (field(body, 'endpoint') === 'edits' || refs.length + files > 0 ? 'edits' : 'generations');
  if (ep === 'edits' && refs.length + files === 0) {
    fail(ctx, 400, "Missing required parameter: 'image'.", 'image', 'missing_required_parameter');
    return null;
  }
  return { model, prompt, n, size, responseFormat: rf, refs: refs.length + files, endpoint: ep };
}

function plan(task: SimTask, r: ImageRequest): void {
  const count = task.faults.outputs === null ? r.n : Math.min(r.n, task.faults.outputs);
  task.plan = { ...r, count };
}

function imageKey(task: SimTask, i: number): string {
  return `img/${task.id}/${i}.png`;
}

/** The `{created, data, usage}` body both modes return. */
function resultBody(ctx: RouteCtx, task: SimTask, createdMs: number): unknown {
  const p = task.plan as unknown as ImageRequest & { count: number };
  const dims = parseSize(p.size) ?? { width: 1024, height: 1024 };
  const data = Array.from({ length: p.count }, (_, i) => {
    const key = imageKey(task, i);
    return p.responseFormat === 'b64_json'
      ? { b64_json: makePng(key).toString('base64'), size: p.size }
      : { url: ctx.state.fileUrl(ctx.publicBaseUrl, key), size: p.size };
  });
  const perImage = Math.ceil((dims.width * dims.height) / 256);
  const textTokens = Math.ceil(p.prompt.length / 4);
  const imageTokens = p.refs * 85;
  const output = perImage * p.count;
  return {
    created: unixSeconds(createdMs),
    model: p.model,
    data,
    usage: {
      generated_images: p.count,
      input_tokens: textTokens + imageTokens,
      input_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens },
      output_tokens: output,
      total_tokens: textTokens + imageTokens + output,
    },
  };
}

function registerFiles(ctx: RouteCtx, task: SimTask, at: number): void {
  const count = (task.plan as { count: number }).count;
  for (let i = 0; i < count; i++) ctx.state.addFile(imageKey(task, i), { seed: imageKey(task, i) }, at);
}

async function syncImages(ctx: RouteCtx, endpoint: 'generations' | 'edits'): Promise<void> {
  const body = await readBody(ctx.req);
  const r = parseImageRequest(ctx, body, endpoint);
  if (!r) return;
  const task = await acceptSubmission(ctx, {
    api: 'openai_images', model: r.model, body: recordedBody(body), async: false, weight: 'image',
    makeId: (n) => `img_${String(n).padStart(6, '0')}`, errorBody: (s) => openAiError(s, 'Simulated upstream error'),
  });
  if (!task) return;
  plan(task, r);
  if (task.faults.outcome === 'hang') return hangResponse(ctx);
  await sleep(ctx.state.baseDelayMs * DURATION_WEIGHT.image);
  if (task.faults.outcome === 'failed') return fail(ctx, 500, 'The server had an error while processing your request. Sorry about that!');
  if (task.faults.outcome === 'expired') return fail(ctx, 504, 'Image generation timed out.', null, 'timeout');
  const now = ctx.state.now();
  registerFiles(ctx, task, now);
  sendJson(ctx.res, 200, resultBody(ctx, task, now));
}

async function submitTask(ctx: RouteCtx): Promise<void> {
  const body = await readBody(ctx.req);
  const r = parseImageRequest(ctx, body, null);
  if (!r) return;
  const task = await acceptSubmission(ctx, {
    api: 'openai_images_task', model: r.model, body: recordedBody(body), async: true, weight: 'image',
    makeId: (n) => `imgtask_${String(n).padStart(6, '0')}`, errorBody: (s) => openAiError(s, 'Simulated upstream error'),
  });
  if (!task) return;
  plan(task, r);
  if (task.faults.outcome === 'succeeded') registerFiles(ctx, task, task.dueAt);
  sendJson(ctx.res, 200, { id: task.id, object: 'image.task', status: 'queued', model: r.model, endpoint: r.endpoint, created_at: unixSeconds(task.submittedAt) });
}

async function getTask(ctx: RouteCtx): Promise<void> {
  const task = findTask(ctx, ctx.params[0], ['openai_images_task']);
  if (!task) return fail(ctx, 404, `No image task found with id '${ctx.params[0]}'.`, 'id', 'not_found');
  if (pollFails(task)) return fail(ctx, 500, 'The server had an error while processing your request. Sorry about that!');
  const ph = phaseOf(task, ctx.state.now());
  const out: Record<string, unknown> = {
    id: task.id,
    object: 'image.task',
    status: ph.state,
    model: task.model,
    endpoint: (task.plan as { endpoint: string }).endpoint,
    created_at: unixSeconds(task.submittedAt),
    started_at: ph.startedAt === null ? null : unixSeconds(ph.startedAt),
    completed_at: ph.finishedAt === null ? null : unixSeconds(ph.finishedAt),
  };
  if (ph.state === 'succeeded') {
    const result = resultBody(ctx, task, ph.finishedAt ?? task.dueAt) as { data: unknown; usage: unknown };
    out.data = result.data;
    out.usage = result.usage;
  } else if (ph.state === 'failed') {
    out.error = { code: 'generation_failed', message: 'The image could not be generated.' };
  } else if (ph.state === 'expired') {
    out.error = { code: 'task_expired', message: 'The task did not finish in time.' };
  }
  sendJson(ctx.res, 200, out);
}

export const openAiImageRoutes: Route[] = [
  { method: 'POST', pattern: /^\/v1\/images\/generations$/, handler: (ctx) => syncImages(ctx, 'generations') },
  { method: 'POST', pattern: /^\/v1\/images\/edits$/, handler: (ctx) => syncImages(ctx, 'edits') },
  { method: 'POST', pattern: /^\/v1\/images\/tasks$/, handler: submitTask },
  { method: 'GET', pattern: /^\/v1\/images\/tasks\/([^/]+)$/, handler: getTask },
];
