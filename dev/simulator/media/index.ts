import type http from 'node:http';
import { MediaState, type MediaOptions } from './state';
import { matchRoute, type Route } from './router';
import { handleControl } from './control';
import { serveFile } from './files';
import { sendJson } from './http';
import { openAiImageRoutes } from './openai-images';
import { midjourneyRoutes } from './midjourney';
import { arkVideoRoutes } from './ark-video';
import { sunoRoutes } from './suno';
import { minimaxRoutes } from './minimax';
import { digitalHumanRoutes } from './digital-human';

export { MediaState } from './state';
export type { MediaOptions, SimTask, MediaApi } from './state';
export type { Fault } from './faults';

export interface MediaRequestCtx {
  channel: string;
  /** Path after the /ch/{channel} prefix. */
  path: string;
  url: URL;
  publicBaseUrl: string;
}

export interface MediaHandler {
  /** Answers the request and resolves true when it is a media route; false leaves it untouched. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, ctx: MediaRequestCtx): Promise<boolean>;
  state: MediaState;
}

const ROUTES: Route[] = [
  ...openAiImageRoutes,
  ...midjourneyRoutes,
  ...arkVideoRoutes,
  ...sunoRoutes,
  ...minimaxRoutes,
  ...digitalHumanRoutes,
];

const CONTROL_PREFIX = '/_control/media';

/**
 * The base URL of result links: `configured` (SIMULATOR_PUBLIC_URL) when set, else the address the
 * connection arrived at (the socket's, never a request header: a Host or X-Forwarded-* header would let
 * a caller point the links, which the gateway fetches, anywhere).
 */
export function publicBaseUrlOf(req: http.IncomingMessage, configured?: string): string {
  if (configured) return configured.replace(/\/+$/, '');
  const address = req.socket?.localAddress ?? '127.0.0.1';
  const host = address.startsWith('::ffff:') ? address.slice(7) : address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${req.socket?.localPort ?? 80}`;
}

/** The media vendors' upstream APIs (images, grid images, video, music, speech, digital humans). */
export function createMediaHandler(opts: MediaOptions = {}): MediaHandler {
  const state = new MediaState(opts);

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, ctx: MediaRequestCtx): Promise<boolean> {
    const method = req.method ?? 'GET';
    const path = ctx.path.split('?')[0] || '/';
    const full = ctx.url.pathname;
    try {
      for (const p of [full, path]) {
        if (p.startsWith(`${CONTROL_PREFIX}/`)) return await handleControl(state, p.slice(CONTROL_PREFIX.length), ctx.url, req, res);
      }
      for (const p of [path, full]) {
        if (p.startsWith('/files/') && (method === 'GET' || method === 'HEAD')) {
          serveFile(state, decodeURIComponent(p.slice('/files/'.length)), req, res);
          return true;
        }
      }
      const hit = matchRoute(ROUTES, method, path);
      if (!hit) return false;
      await hit.route.handler({ req, res, channel: ctx.channel, path, url: ctx.url, publicBaseUrl: ctx.publicBaseUrl, params: hit.params, state });
      return true;
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'simulator_error', message: (err as Error).message } });
      else res.destroy();
      return true;
    }
  }

  return { handle, state };
}
