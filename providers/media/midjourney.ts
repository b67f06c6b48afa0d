import { z } from 'zod';
import type { MediaProvider, PollResult, ProviderCall } from './types';
import { UpstreamHttpError } from './http';
import { failedImages, imagesOutcome, keptOutcome, parseUpstream, type ImagesBody } from './images-common';
import { resolveValue } from './images-files';
import { mediaErrorJson } from '../../domain/error-bodies';

/** A poll and its b64_json downloads (in parallel) fit in the workflow's 20 s poll activity. */
const POLL_TIMEOUT_MS = 8_000;
const DOWNLOAD_TIMEOUT_MS = 10_000;

export const MJ_ASPECT_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4'] as const;

/** The listed aspect ratio nearest to `WxH` (compared on a log scale, so 2:1 and 1:2 are equally far from 1:1). */
export function nearestAspectRatio(size: string): string | null {
  const m = /^(\d+)x(\d+)$/.exec(size.trim());
  if (!m || Number(m[1]) === 0 || Number(m[2]) === 0) return null;
  const want = Math.log(Number(m[1]) / Number(m[2]));
  let best: string = MJ_ASPECT_RATIOS[0];
  let bestGap = Infinity;
  for (const ar of MJ_ASPECT_RATIOS) {
    const [w, h] = ar.split(':').map(Number);
    const gap = Math.abs(Math.log(w / h) - want);
    if (gap < bestGap) [best, bestGap] = [ar, gap];
  }
  return best;
}

const TIER_FLAG = /(^|\s)--(sd|hd)(?=\s|$)/g;

/**
 * The imagine prompt: image prompt URLs first (Midjourney's syntax), the text,
 * `--ar W:H` from `size` unless the prompt sets its own, and the output tier
 * flags `--sd`/`--hd` moved to the very end.
 */
export function imaginePrompt(prompt: string, opts: { size?: string; imageUrls?: string[] }): string {
  const tiers = [...prompt.matchAll(TIER_FLAG)].map((m) => `--${m[2]}`);
  let text = prompt.replace(TIER_FLAG, ' ').replace(/\s+/g, ' ').trim();
  const ar = opts.size && !/(^|\s)--(ar|aspect)\s/.test(` ${text} `) ? nearestAspectRatio(opts.size) : null;
  if (ar) text = `${text} --ar ${ar}`;
  return [...(opts.imageUrls ?? []), text, ...tiers].join(' ');
}

const Submitted = z.looseObject({ code: z.number(), description: z.string().nullish(), result: z.union([z.string(), z.number()]).nullish() });
const Fetched = z.looseObject({
  id: z.union([z.string(), z.number()]).optional(),
  status: z.string().nullish(),
  progress: z.string().nullish(),
  imageUrl: z.string().nullish(),
  imageUrls: z.array(z.union([z.string(), z.looseObject({ url: z.string() })])).nullish(),
  finishTime: z.number().nullish(),
  failReason: z.string().nullish(),
});

/** Submit codes that carry a task id: 1 accepted, 21 already exists, 22 queued behind others. */
const ACCEPTED = new Set([1, 21, 22]);
/** Queue full: another channel may take it. */
const QUEUE_FULL = 23;

const openAiError = (status: number, code: string, message: string) =>
  mediaErrorJson(code, message, status >= 500 ? 'upstream_error' : 'invalid_request_error');

/** The proxy's refusals, in the OpenAI error shape every image model answers with. */
function refusal(err: UpstreamHttpError): UpstreamHttpError {
  let message = err.body.slice(0, 500);
  try {
    const b = JSON.parse(err.body) as { description?: unknown; error?: unknown; message?: unknown };
    message = String(b.description ?? b.message ?? b.error ?? message);
  } catch {
    // not JSON: keep the text
  }
  const code = err.status >= 500 ? 'upstream_error' : 'invalid_request';
  return new UpstreamHttpError(err.status, openAiError(err.status, code, message), 'application/json');
}

const headers = (call: ProviderCall) => ({ 'mj-api-secret': call.apiKey, authorization: `Bearer ${call.apiKey}` });

async function download(url: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  } catch (err) {
    throw new UpstreamHttpError(502, `image download failed: ${(err as Error).message}`, undefined);
  }
  if (!res.ok) throw new UpstreamHttpError(502, `image download answered ${res.status}`, undefined);
  return Buffer.from(await res.arrayBuffer()).toString('base64');
}

/**
 * Fixed-grid images through a Midjourney proxy: POST {base}/mj/submit/imagine,
 * then GET {base}/mj/task/{id}/fetch until SUCCESS (the four `imageUrls` are
 * the outputs) or FAILURE. Clients see the same OpenAI Images body as every
 * other image model.
 */
export const midjourney: MediaProvider = {
  name: 'mj',
  async submit(call) {
    const input = call.task.input as { prompt: string; size?: string; image?: string[] };
    const refs = ((await resolveValue(call, input.image ?? [])) as string[]);
    const body = {
      prompt: imaginePrompt(input.prompt, { size: input.size, imageUrls: refs.filter((r) => !r.startsWith('data:')) }),
      base64Array: refs.filter((r) => r.startsWith('data:')),
      botType: /niji/i.test(call.upstreamModel) ? 'NIJI_JOURNEY' : 'MID_JOURNEY',
      state: call.task._id,
    };
    let json: unknown;
    try {
      json = (await call.http.json('POST', `${call.channel.base_url}/mj/submit/imagine`, { headers: headers(call), body, timeoutMs: 60_000 })).json;
    } catch (err) {
      throw err instanceof UpstreamHttpError ? refusal(err) : err;
    }
    const r = parseUpstream(Submitted, json, 'midjourney submit');
    if (ACCEPTED.has(r.code) && r.result !== null && r.result !== undefined && String(r.result) !== '') {
      return { kind: 'task', upstreamTaskId: String(r.result) };
    }
    const status = r.code === QUEUE_FULL ? 503 : 400;
    throw new UpstreamHttpError(status, openAiError(status, status === 400 ? 'invalid_request' : 'upstream_error', r.description ?? `midjourney refused the job (code ${r.code})`), 'application/json');
  },

  async poll(call, id): Promise<PollResult> {
    const r = await call.http.json('GET', `${call.channel.base_url}/mj/task/${encodeURIComponent(id)}/fetch`, { headers: headers(call), timeoutMs: POLL_TIMEOUT_MS });
    const t = parseUpstream(Fetched, r.json, 'midjourney task');
    switch (t.status) {
      case 'NOT_START':
      case 'SUBMITTED':
      case null:
      case undefined:
        return { state: 'queued' };
      case 'SUCCESS':
        break;
      case 'FAILURE':
      case 'CANCEL': {
        const reason = t.failReason || `midjourney task ended with ${t.status}`;
        return /timeout|timed out/i.test(reason)
          ? { state: 'expired', outcome: failedImages('expired', 'task_expired', reason) }
          : { state: 'failed', outcome: failedImages('failed', 'generation_failed', reason) };
      }
      default:
        return { state: 'running' };
    }
    const urls = (t.imageUrls ?? []).map((u) => (typeof u === 'string' ? u : u.url)).filter(Boolean);
    const b64 = (call.task.input as { response_format?: string }).response_format === 'b64_json';
    const data = b64 ? await Promise.all(urls.map(async (u) => ({ b64_json: await download(u) }))) : urls.map((url) => ({ url }));
    const body: ImagesBody = {
      created: Math.floor((t.finishTime || Date.now()) / 1000),
      model: call.task.model,
      data,
      usage: { generated_images: data.length, input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    };
    return { state: 'succeeded', outcome: await keptOutcome(call, imagesOutcome(body, call.task.model, Date.now())) };
  },
};
