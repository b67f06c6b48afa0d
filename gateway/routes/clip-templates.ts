import { upstreamApiKey } from '../../platform/config';
import Router from '@koa/router';
import { z } from 'zod';
import { errors, GatewayError } from '../../domain/errors';
import { isModelAllowed } from '../../domain/api-key';
import type { Channel } from '../../domain/catalogue';
import { parseUpstream } from '../../providers/media/ark-schemas';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { digitalHumanDialect } from '../media/video-dialect';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { validQuery } from '../middleware/validate';
import { first } from '../../capabilities/media/list-query';
import { climbLadder, MEDIA_LADDER, UpstreamHttpError } from '../../domain/channel-ladder';
import { upstreamFailure } from '../upstream-errors';
import { mediaRedisKeys } from '../../capabilities/media/store';

/**
 * Clip templates (spec 2 sections 2.4, 4.6; docs/media/avatars.md): per
 * scene and by id, free, cached in Redis (the templates are the vendor's
 * and change rarely). The key must be allowed at least one `clip-*` model.
 */
export const CLIP_SCENES = ['virtualman', 'realMan', 'oralMixCutting', 'newsMixCutting'] as const;
export const CLIP_TEMPLATE_TTL_S = 600;
export const ListQuery = z.object({ scene: z.preprocess(first, z.enum(CLIP_SCENES, { error: `must be one of ${CLIP_SCENES.join(', ')}` }).optional()) });
const UPSTREAM_TIMEOUT_MS = 15_000;

const Template = z.looseObject({
  id: z.string(),
  scene: z.string(),
  title: z.string(),
  description: z.string().nullish(),
  cover_url: z.string().nullish(),
  has_title: z.boolean(),
  has_persona: z.boolean(),
  duration_range: z.looseObject({ min_seconds: z.number(), max_seconds: z.number() }).nullish(),
});
const TemplateList = z.looseObject({ templates: z.array(Template) });
const TemplateDetail = Template.extend({ canvas: z.looseObject({}), layers: z.array(z.looseObject({})) });

/** A malformed vendor answer is a 502 for the client, not an internal error. */
function shape<T>(schema: z.ZodType<T>, json: unknown, what: string): T {
  try {
    return parseUpstream(schema, json, what);
  } catch (err) {
    if (err instanceof UpstreamHttpError) throw new GatewayError('upstream_error', err.message, { status: 502 });
    throw err;
  }
}

function summary(t: z.infer<typeof Template>) {
  return {
    id: t.id, scene: t.scene, title: t.title, description: t.description ?? null, cover: t.cover_url ?? null,
    has_title: t.has_title, has_persona: t.has_persona, duration_range: t.duration_range ?? null,
  };
}

export function clipTemplateRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  /** The clip models this key may use (403 model_not_allowed when none), and their channels in ladder order. */
  const clipChannels = (ctx: Ctx): Channel[] => {
    const catalogue = deps.catalogue();
    const clips = catalogue.models.filter((m) => m.endpoint_type === 'clip' && m.callable && !m.retired);
    const allowed = clips.filter((m) => isModelAllowed(ctx.state.auth!.key.allowed_models, [m.id, ...m.aliases]));
    if (allowed.length === 0) {
      throw new GatewayError('model_not_allowed', 'This API key is not allowed to use any clip model (clip-*), which clip templates require', { param: 'model' });
    }
    const seen = new Set<string>();
    return allowed.flatMap((m) => catalogue.channels(m, 'task')).filter((c) => !seen.has(c.id) && seen.add(c.id));
  };

  /** GET from the vendor over the channel ladder; 404 passes as not found. */
  const fetchUpstream = async (channels: Channel[], path: string): Promise<unknown> => {
    if (channels.length === 0) throw errors.noChannel('clip-*', 'clip templates');
    try {
      const { value } = await climbLadder(channels, MEDIA_LADDER, async (channel) => {
        const apiKey = upstreamApiKey(deps.config, channel);
        return (await deps.mediaHttp.forAttempt(channel.id).json('GET', `${channel.base_url}${path}`, { headers: { authorization: `Bearer ${apiKey}` }, timeoutMs: UPSTREAM_TIMEOUT_MS })).json;
      });
      return value;
    } catch (err) {
      if (err instanceof UpstreamHttpError && err.status === 404) throw errors.notFound('no such clip template');
      throw upstreamFailure(err, 'clip templates');
    }
  };

  /** Cached JSON answer, else fetch, shape and cache it. A broken cache entry is refetched. */
  const cached = async (key: string, load: () => Promise<unknown>): Promise<unknown> => {
    const hit = await deps.redis.get(mediaRedisKeys.clipTemplates(key)).catch(() => null);
    if (hit) {
      try {
        return JSON.parse(hit);
      } catch {
        /* refetch */
      }
    }
    const value = await load();
    await deps.redis.set(mediaRedisKeys.clipTemplates(key), JSON.stringify(value), 'EX', CLIP_TEMPLATE_TTL_S).catch(() => undefined);
    return value;
  };

  const read = [digitalHumanDialect, authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true }), rateLimit()];

  router.get('/v1/videos/clip-templates', ...read, async (ctx) => {
    const scene = validQuery(ctx, ListQuery).scene ?? null;
    const channels = clipChannels(ctx);
    const data = await cached(`list:${scene ?? 'all'}`, async () => {
      const json = await fetchUpstream(channels, `/dh/v1/clip-templates${scene ? `?scene=${encodeURIComponent(scene)}` : ''}`);
      return shape(TemplateList, json, 'clip templates').templates.map(summary);
    });
    ctx.body = { object: 'list', scene, data };
  });

  router.get('/v1/videos/clip-templates/:id', ...read, async (ctx) => {
    const id = ctx.params.id;
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(id)) throw errors.notFound(`no clip template ${id}`);
    const channels = clipChannels(ctx);
    ctx.body = await cached(`item:${id}`, async () => {
      const t = shape(TemplateDetail, await fetchUpstream(channels, `/dh/v1/clip-templates/${encodeURIComponent(id)}`), 'clip template');
      return { ...summary(t), canvas: t.canvas, layers: t.layers };
    });
  });
  return router;
}
