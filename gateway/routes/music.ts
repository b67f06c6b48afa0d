import { upstreamApiKey } from '../../platform/config';
import Router from '@koa/router';
import { errors, GatewayError } from '../../domain/errors';
import { musicQuote } from '../../domain/media/pricing';
import { upstreamFailure } from '../upstream-errors';
import { songView, sunoFetch } from '../../providers/media/suno';
import { ownLinkExpiry } from '../../providers/media/minimax-common';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { jsonBody } from '../middleware/body';
import { unix } from '../../capabilities/media/list-query';
import { mediaTaskRoutes } from '../media/task-routes';
import { MusicAssetsRequest, parseMusicRequest } from '../../capabilities/media/music-request';
import { musicSubmitted, musicView } from '../../capabilities/media/music-view';
import { parseInput } from '../../domain/validation';

export const MUSIC_ENDPOINT = 'music';
const MUSIC_BODY_LIMIT = 256 * 1024;
const MUSIC_STATUSES = ['processing', 'succeeded', 'failed', 'expired', 'cancelled'];

/**
 * Music (spec 2 section 4.7; docs/media/music.md): Suno-style generations of
 * two songs, charged per request and pro rata when fewer songs come back;
 * poll, list, and `POST /v1/music/assets` (free: fresh links and lyrics of a
 * finished generation's songs).
 */
export function musicRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const music = mediaTaskRoutes(deps, router, { kind: 'music', endpointTypes: ['music'], label: 'music generations' });
  const { tasks, read } = music;

  router.post('/v1/music/generations', ...music.submitChain('music.generations', jsonBody(MUSIC_BODY_LIMIT)), async (ctx: Ctx) => {
    const req = parseMusicRequest(ctx.state.body);
    const model = music.model(ctx, req.model);
    const doc = await music.submit(ctx, { endpoint: MUSIC_ENDPOINT, model, input: { ...req, model: model.id }, quote: musicQuote(model) });
    ctx.body = musicSubmitted(doc);
  });
  music.list('/v1/music/generations', { endpoints: [MUSIC_ENDPOINT], statuses: MUSIC_STATUSES, view: musicView });
  music.get('/v1/music/generations/:id', { endpoints: [MUSIC_ENDPOINT], view: musicView });

  router.post('/v1/music/assets', ...read, jsonBody(MUSIC_BODY_LIMIT), async (ctx) => {
    const req = parseInput('body', MusicAssetsRequest, ctx.state.body);
    const doc = await tasks.get(ctx.state.auth!.account.id, req.generation_id, [MUSIC_ENDPOINT]);
    if (doc.state !== 'succeeded' || !doc.upstream?.task_id) {
      throw errors.invalidRequest(`generation ${doc._id} has no songs (status ${musicView(doc).status})`, 'generation_id');
    }
    const known = new Set(((doc.result?.extra?.songs as Array<{ id: string }> | undefined) ?? []).map((s) => s.id));
    const wanted = req.song_ids ?? [...known];
    const unknown = wanted.find((id) => !known.has(id));
    if (unknown) throw errors.invalidRequest(`song ${unknown} is not a song of generation ${doc._id}`, 'song_ids');
    const model = deps.catalogue().resolve(doc.model);
    const channel = model && deps.catalogue().channel(model, 'task', doc.upstream!.channel);
    if (!channel) throw new GatewayError('no_channel_available', `the channel generation ${doc._id} ran on is no longer available`);
    const apiKey = upstreamApiKey(deps.config, channel);
    let fetched;
    try {
      fetched = await sunoFetch(deps.mediaHttp, channel, apiKey, [doc.upstream.task_id]);
    } catch (err) {
      throw upstreamFailure(err, 'music assets');
    }
    const clips = (fetched[0]?.data ?? []).filter((c) => wanted.includes(c.id));
    ctx.body = {
      object: 'music.assets',
      generation_id: doc._id,
      songs: clips.map((c) => {
        const song = songView(c);
        const links = [song.audio_url, song.image_url, song.image_large_url, song.video_url].filter((u): u is string => !!u);
        const exp = ownLinkExpiry(links);
        return { ...song, expires_at: exp === null ? null : unix(new Date(exp)) };
      }),
    };
  });
  return router;
}
