import { publicStatus, type TaskDocument } from '../../domain/media/task';
import { formatCredits } from '../../domain/money';
import { unix } from './list-query';

/** The submit answer: `{id, status: queued, model, created_at}`. */
export function submittedView(doc: TaskDocument) {
  return { id: doc._id, status: publicStatus('video', doc.state), model: doc.model, created_at: unix(doc.created_at) };
}

const pick = (...values: unknown[]) => values.find((v) => v !== undefined && v !== null) ?? null;

/** The upstream's own error text when a 4xx/5xx body was kept, else the workflow's message. */
function errorMessage(doc: TaskDocument): string {
  if (doc.final_body) {
    try {
      const e = (JSON.parse(doc.final_body) as { error?: { code?: unknown; message?: unknown } }).error;
      if (e && typeof e.message === 'string') return typeof e.code === 'string' ? `${e.code}: ${e.message}` : e.message;
    } catch {
      /* not JSON: fall through */
    }
  }
  return doc.error_message ?? `the task ${doc.state}`;
}

/**
 * A video task as polled and listed (spec 2 section 4.4), Ark-shaped: the
 * generation parameters, `content{video_url, last_frame_url}`, `usage`, and
 * `video_url` / `expires_at` at the top level once succeeded; `progress` only
 * when the upstream reports it; an `error` object once failed, expired or cancelled.
 */
export function videoView(doc: TaskDocument): Record<string, unknown> {
  const state = doc.state;
  const input = doc.input;
  const extra = doc.result?.extra ?? {};
  const out: Record<string, unknown> = {
    id: doc._id,
    object: 'video.generation',
    status: publicStatus('video', state),
    model: doc.model,
    created_at: unix(doc.created_at),
    updated_at: unix(doc.completed_at ?? doc.updated_at),
  };
  const progress = pick(doc.progress, extra.progress);
  if (typeof progress === 'number') out.progress = progress;
  Object.assign(out, {
    ratio: pick(extra.ratio, input.ratio),
    resolution: pick(extra.resolution, input.resolution),
    duration: pick(extra.duration, input.duration),
    generate_audio: pick(extra.generate_audio, input.generate_audio),
    seed: pick(extra.seed, input.seed),
    framespersecond: pick(extra.framespersecond, input.framespersecond),
  });
  if (state === 'succeeded' && doc.result) {
    const videoUrl = pick(extra.video_url, doc.result.urls[0]);
    out.content = { video_url: videoUrl, last_frame_url: pick(extra.last_frame_url), ...(extra.cover_url ? { cover_url: extra.cover_url } : {}) };
    const tokens = (extra.usage ?? {}) as { completion_tokens?: number; total_tokens?: number };
    out.usage = {
      ...(tokens.completion_tokens !== undefined ? { completion_tokens: tokens.completion_tokens } : {}),
      ...(tokens.total_tokens !== undefined ? { total_tokens: tokens.total_tokens } : {}),
      billed_seconds: doc.unit_count,
      cost: formatCredits(doc.cost_nano),
    };
    out.video_url = videoUrl;
    out.expires_at = unix(doc.result.expires_at);
  } else if (state === 'failed' || state === 'expired' || state === 'cancelled') {
    out.error = { code: doc.error_code ?? (state === 'failed' ? 'generation_failed' : `task_${state}`), message: errorMessage(doc) };
  }
  return out;
}
