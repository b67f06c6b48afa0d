import { z } from 'zod';

/** The digital-human / clip task API (no public vendor; see docs/media/videos.md). */
export const DhSubmitResponse = z.looseObject({ task_id: z.string().min(1), status: z.string().optional() });

export const DhTask = z.looseObject({
  task_id: z.string(),
  kind: z.string().optional(),
  status: z.enum(['pending', 'processing', 'succeeded', 'failed', 'expired', 'cancelled']),
  progress: z.number().nullish(),
  result: z
    .looseObject({ video_url: z.string().optional(), duration_seconds: z.number().optional(), cover_url: z.string().optional() })
    .nullish(),
  error: z.looseObject({ code: z.string().optional(), message: z.string().optional() }).nullish(),
  created_at: z.number().optional(),
  updated_at: z.number().optional(),
});
export type DhTask = z.infer<typeof DhTask>;
