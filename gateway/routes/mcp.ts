import Router from '@koa/router';
import { GatewayError } from '../../domain/errors';
import type { PlatformDeps } from '../../capabilities/deps';
import type { AccountsDeps } from '../../capabilities/accounts/deps';
import type { KnowledgeDeps } from '../../capabilities/knowledge/deps';
import type { Ctx, GatewayState, Middleware } from '../context';
import { authenticate } from '../middleware/auth';
import { publicBaseUrl } from '../../platform/config';
import { rateLimit } from '../middleware/rate-limit';
import type { BaseRef } from '../../capabilities/knowledge/page-store';
import { createWikiServer, WIKI_TOOLS } from '../../capabilities/knowledge/mcp/tools';
import { readRaw } from '../middleware/body';
import { checkEnvelope } from './mcp-envelope';

/**
 * The MCP server at `/mcp` (spec 3 section 4.2): Streamable HTTP, stateless
 * (no session id; every POST is served by a fresh server and transport), JSON
 * response mode (one JSON body per POST, no SSE). The key comes in
 * `Authorization: Bearer` or `x-api-key`; a refusal before the MCP layer is a
 * JSON-RPC error body with the HTTP status (401 also carries
 * `WWW-Authenticate`). Other methods get 405 with `Allow: POST`.
 */
export const MCP_PATH = '/mcp';

/** JSON-RPC "server error" range: an implementation-defined refusal. */
const JSONRPC_SERVER_ERROR = -32000;

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'authorization, x-api-key, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
  'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate',
  'access-control-max-age': '86400',
};

/** Loaded on the first /mcp call, as the SDK's server (capabilities/knowledge/mcp/tools.ts). */
let transportModule: Promise<typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')> | undefined;
let typesModule: Promise<typeof import('@modelcontextprotocol/sdk/types.js')> | undefined;

/** A POST body's limit: the SDK transport's own default (4 MB). */
const MCP_BODY_LIMIT = 4 * 1024 * 1024;

export function mcpRoutes(deps: PlatformDeps & AccountsDeps & KnowledgeDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const auth = authenticate(deps, { methods: 'header-only', billable: false, touchLastUsed: true });

  router.options(MCP_PATH, (ctx) => {
    ctx.set(CORS);
    ctx.status = 204;
  });

  router.post(MCP_PATH, jsonRpcRefusals(), auth, rateLimit(), async (ctx) => {
    // A JSON body is read and checked here (gateway/routes/mcp-envelope.ts); any other goes to the transport, which answers 415.
    let parsedBody: unknown;
    if (ctx.is('application/json')) {
      const [raw, { JSONRPCMessageSchema }] = await Promise.all([readRaw(ctx, MCP_BODY_LIMIT), (typesModule ??= import('@modelcontextprotocol/sdk/types.js'))]);
      const envelope = checkEnvelope(raw.toString('utf8'), ctx.get('mcp-protocol-version') || undefined, WIKI_TOOLS, JSONRPCMessageSchema);
      if (!envelope.ok) {
        ctx.set(CORS);
        ctx.status = envelope.status;
        ctx.body = envelope.reply;
        return;
      }
      parsedBody = envelope.body;
    }
    const accountId = ctx.state.auth!.account.id;
    let scope: Promise<BaseRef[]> | undefined;
    const [server, { StreamableHTTPServerTransport }] = await Promise.all([createWikiServer({
      reader: deps.knowledge,
      scope: () => (scope ??= deps.knowledge.scopeOfAccount(accountId)),
      origin: publicBaseUrl(deps.config),
      log: deps.log,
      traceId: ctx.state.requestId,
    }), (transportModule ??= import('@modelcontextprotocol/sdk/server/streamableHttp.js'))]);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.res.on('close', () => {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    for (const [k, v] of Object.entries(CORS)) ctx.res.setHeader(k, v);
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, parsedBody);
  });

  // GET (an SSE stream) and DELETE (ending a session) have no meaning for a stateless server.
  router.all(MCP_PATH, (ctx) => {
    ctx.set(CORS);
    ctx.set('allow', 'POST');
    ctx.status = 405;
    ctx.body = rpcError(JSONRPC_SERVER_ERROR, `Method not allowed: ${ctx.method} ${MCP_PATH}; send JSON-RPC messages with POST`);
  });
  return router;
}

/** Errors raised before the MCP layer (401, 429) as JSON-RPC error bodies, not the chat-completions shape. */
function jsonRpcRefusals(): Middleware {
  return async function refuse(ctx: Ctx, next) {
    try {
      await next();
    } catch (thrown) {
      if (!(thrown instanceof GatewayError) || ctx.headerSent) throw thrown;
      ctx.set(CORS);
      if (thrown.headers) ctx.set(thrown.headers);
      if (thrown.status === 401) ctx.set('www-authenticate', 'Bearer realm="mcp", error="invalid_token"');
      ctx.status = thrown.status;
      ctx.body = rpcError(JSONRPC_SERVER_ERROR, thrown.message, { status: thrown.status, code: thrown.code });
    }
  };
}

function rpcError(code: number, message: string, data?: Record<string, unknown>) {
  return { jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null };
}
