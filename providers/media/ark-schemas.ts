import { z } from 'zod';
import { UpstreamHttpError } from './http';

/**
 * Volcengine Ark content-generation task bodies, as far as the gateway reads
 * them. Unknown fields are kept (looseObject) and ignored.
 */
export const ArkSubmitResponse = z.looseObject({ id: z.string().min(1) });

export const ArkTask = z.looseObject({
  id: z.string(),
  model: z.string().optional(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled', 'expired']),
  error: z.looseObject({ code: z.string().optional(), message: z.string().optional() }).nullish(),
  content: z.looseObject({ video_url: z.string().optional(), last_frame_url: z.string().optional() }).nullish(),
  usage: z.looseObject({ completion_tokens: z.number().optional(), total_tokens: z.number().optional() }).nullish(),
  /** Only the progress tier sends it. */
  progress: z.number().optional(),
  created_at: z.number().optional(),
  updated_at: z.number().optional(),
  seed: z.number().optional(),
  resolution: z.string().optional(),
  ratio: z.string().optional(),
  duration: z.number().optional(),
  framespersecond: z.number().optional(),
  generate_audio: z.boolean().optional(),
});
export type ArkTask = z.infer<typeof ArkTask>;

/** Parse an upstream body or fail as a (retryable) bad gateway: a malformed answer is the upstream's fault. */
export function parseUpstream<T>(schema: z.ZodType<T>, json: unknown, what: string): T {
  const r = schema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new UpstreamHttpError(502, `${what}: unexpected upstream body (${issue.path.join('.')}: ${issue.message})`, 'application/json');
  }
  return r.data;
}
