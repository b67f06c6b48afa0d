// The chat upstream simulator: a plain node:http server speaking the vendors'
// wire formats, with a fault-injection control API. See README.md.
//
// Every vendor route is served under /ch/{channel} and without the prefix
// (channel "default"). Dispatch: /_control -> control API; exact chat paths
// via CHAT_ROUTES; Gemini generate-content paths; then `extraHandlers` (for
// example the media routes) in order; then a 404.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimulatorState, handleControl, selectHeaders } from './control';
import { BodyTooLarge, readBody, resetSocket, sendBody, sendJson } from './http';
import { defaultErrorBody, openaiError } from './errors';
import type { ChatRoute } from './chat/common';
import { openaiChatRoute } from './chat/openai-chat';
import { openaiResponsesRoute } from './chat/openai-responses';
import { anthropicMessagesRoute } from './chat/anthropic-messages';
import { geminiRoute, matchGeminiPath } from './chat/gemini';

export { SimulatorState } from './control';

export interface SimContext {
  /** `default`, or the {channel} of a /ch/{channel}/... path. */
  channel: string;
  /** The path with the /ch/{channel} prefix and the query string removed. */
  path: string;
  /** The full request URL (original path, with the query). */
  url: URL;
  state: SimulatorState;
}

/** A pluggable route: return true when it handled (answered) the request. */
export type SimHandler = (req: IncomingMessage, res: ServerResponse, ctx: SimContext) => Promise<boolean> | boolean;

export interface SimulatorOptions {
  ttftMs?: number;
  tokenDelayMs?: number;
  /** Tried in order after the chat routes, before the 404. */
  extraHandlers?: SimHandler[];
}

export interface Simulator {
  server: http.Server;
  /** Listen (port 0 = any free port); resolves to the base URL, e.g. http://127.0.0.1:8090 */
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
  state: SimulatorState;
}

/** POST routes by exact path (after the channel prefix). */
export const CHAT_ROUTES: ReadonlyMap<string, ChatRoute> = new Map([
  ['/v1/chat/completions', openaiChatRoute],
  ['/v1/responses', openaiResponsesRoute],
  ['/v1/messages', anthropicMessagesRoute],
]);

const CHANNEL_RE = /^[A-Za-z0-9._-]+$/;

export function createSimulator(opts: SimulatorOptions = {}): Simulator {
  const state = new SimulatorState({ ttftMs: opts.ttftMs ?? 0, tokenDelayMs: opts.tokenDelayMs ?? 0 });
  const extra = opts.extraHandlers ?? [];

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    dispatch(req, res, state, extra).catch((err: unknown) => {
      if (err instanceof BodyTooLarge) {
        if (!res.headersSent) sendBody(res, 413, openaiError('Request body too large.', 'invalid_request_error'));
        return;
      }
      console.error(JSON.stringify({ msg: 'simulator handler error', error: String((err as Error)?.stack ?? err) }));
      if (!res.headersSent) sendJson(res, 500, { error: { message: 'simulator internal error', type: 'server_error', param: null, code: null } });
      else res.destroy();
    });
  };

  const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: 66_000 }, onRequest);

  return {
    server,
    state,
    listen(port = 0, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        // A deep accept queue, like a real provider's: thousands of streams may connect at once.
        server.listen({ port, host, backlog: 4096 }, () => {
          server.off('error', reject);
          const a = server.address() as AddressInfo;
          const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
          resolve(`http://${h}:${a.port}`);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

async function dispatch(req: IncomingMessage, res: ServerResponse, state: SimulatorState, extra: SimHandler[]): Promise<void> {
  const rawUrl = req.url ?? '/';
  const q = rawUrl.indexOf('?');
  let path = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const search = q < 0 ? '' : rawUrl.slice(q);
  let channel = 'default';

  if (path.startsWith('/ch/')) {
    const slash = path.indexOf('/', 4);
    const ch = slash < 0 ? path.slice(4) : path.slice(4, slash);
    if (!CHANNEL_RE.test(ch)) return notFound(req, res, path);
    channel = ch;
    path = slash < 0 ? '/' : path.slice(slash);
  } else if (path.startsWith('/_control/') && (await handleControl(req, res, path, new URL(rawUrl, 'http://simulator'), state))) {
    return;
  }

  if (req.method === 'POST') {
    const route = CHAT_ROUTES.get(path);
    if (route) return runChat(route, req, res, state, channel, path, search, {});
    const g = matchGeminiPath(path);
    if (g) return runChat(geminiRoute, req, res, state, channel, path, search, g);
  }

  if (extra.length > 0) {
    const ctx: SimContext = { channel, path, url: new URL(rawUrl, 'http://simulator'), state };
    for (const h of extra) if (await h(req, res, ctx)) return;
  }
  notFound(req, res, path);
}

function notFound(req: IncomingMessage, res: ServerResponse, path: string): void {
  req.resume();
  sendBody(res, 404, openaiError(`Invalid URL (${req.method} ${path})`, 'invalid_request_error'));
}

async function runChat(
  route: ChatRoute,
  req: IncomingMessage,
  res: ServerResponse,
  state: SimulatorState,
  channel: string,
  path: string,
  search: string,
  params: { model?: string; method?: string },
): Promise<void> {
  const body = await readBody(req);
  const headers = selectHeaders(req);
  state.record(channel, req.method ?? 'POST', path, search, headers, body);
  const fault = state.takeFault(channel);
  if (fault) {
    switch (fault.type) {
      case 'status': {
        const headers: string[] = [];
        let contentType = 'application/json';
        if (fault.headers) for (const [k, v] of Object.entries(fault.headers)) {
          if (k === 'content-type') contentType = v;
          else headers.push(k, v);
        }
        let text: string;
        if (fault.body === undefined || fault.body === null) text = defaultErrorBody(route.dialect, fault.status);
        else if (typeof fault.body === 'string') {
          text = fault.body;
          if (!fault.headers?.['content-type'] && !/^\s*[[{]/.test(text)) contentType = 'text/plain; charset=utf-8';
        } else text = JSON.stringify(fault.body);
        return sendBody(res, fault.status, text, contentType, headers);
      }
      case 'reset':
        return resetSocket(req);
      case 'hang':
        return; // never answer; the socket closes when the client gives up
      case 'cut':
      case 'error_frame':
        return route.handle({ req, res, channel, path, search, headers, body, state, fault, params });
    }
  }
  route.handle({ req, res, channel, path, search, headers, body, state, fault: null, params });
}
