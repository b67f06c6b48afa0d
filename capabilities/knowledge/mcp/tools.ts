import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { GatewayError } from '../../../domain/errors';
import type { Logger } from '../../../platform/logger';
import type { BaseRef } from '../page-store';
import { LIMITS, type KnowledgeReader } from '../reader';

/**
 * The 6 read-only tools of spec 3 section 4.2 over everything the key's
 * account may read (tools take no `kb_id`). Each answers `structuredContent`
 * (checked against its output schema) and the same facts as text for clients
 * that only show text. A page that is missing or unreadable is an `isError`
 * result; a bad argument is the SDK's input-validation error.
 */

export interface ToolContext {
  reader: KnowledgeReader;
  /** Everything the caller may read, computed once per request on first use. */
  scope: () => Promise<BaseRef[]>;
  /** Origin that signed source links point at. */
  origin: string;
  log: Logger;
  traceId: string;
}

export const SERVER_INFO = { name: 'model-gateway-wiki', version: '1.0.0' };

/** The tools createWikiServer registers (the /mcp edge answers a call of any other as -32602: gateway/routes/mcp-envelope.ts). */
export const WIKI_TOOLS: ReadonlySet<string> = new Set(['search_wiki', 'read_page', 'read_pages', 'list_by_tag', 'backlinks', 'get_source']);

const hitSchema = z.object({
  id: z.string(), kb_id: z.string(), title: z.string(), summary: z.string(), snippet: z.string(),
  tags: z.array(z.string()), confidence: z.number(), needs_review: z.boolean(), score: z.number(),
});
const summarySchema = z.object({
  id: z.string(), kb_id: z.string(), title: z.string(), summary: z.string(), tags: z.array(z.string()),
  confidence: z.number(), needs_review: z.boolean(),
});
const pageSchema = z.object({
  id: z.string(), kb_id: z.string(), title: z.string(), summary: z.string(), tags: z.array(z.string()),
  aliases: z.array(z.string()), links: z.array(z.string()), body: z.string(), body_truncated: z.boolean(),
  confidence: z.number(), needs_review: z.boolean(),
  source: z.object({ r2_key: z.string(), filename: z.string(), locator: z.string(), compiled_at: z.string(), model: z.string() }),
  outgoing_links: z.array(z.object({ id: z.string(), resolved: z.boolean(), title: z.string() })),
});
const pageId = z.string().trim().min(1).max(200).describe('page id (from search_wiki, list_by_tag or backlinks)');

/**
 * The MCP SDK (about 15 MB of modules with its schema libraries) is loaded on the first /mcp call, not
 * with every gateway: most never serve one. A dynamic import stays one in the bundle (dev/scripts/build.ts).
 */
let sdk: Promise<typeof import('@modelcontextprotocol/sdk/server/mcp.js')> | undefined;

export async function createWikiServer(ctx: ToolContext): Promise<McpServer> {
  const { McpServer } = await (sdk ??= import('@modelcontextprotocol/sdk/server/mcp.js'));
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: 'Read-only access to the knowledge bases this API key may read: search_wiki to find pages, read_page / read_pages to read them, list_by_tag, backlinks and get_source to navigate.',
  });
  const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

  server.registerTool('search_wiki', {
    title: 'Search the knowledge bases',
    description: 'Lexical (BM25) search over page titles, aliases, tags, summaries and bodies; Chinese and Japanese queries work. Returns light hits without bodies, best first.',
    inputSchema: {
      q: z.string().trim().min(1).max(1000).describe('keywords'),
      limit: z.number().int().min(1).max(LIMITS.searchMax).optional().describe(`hits to return (default ${LIMITS.mcpSearchDefault}, at most ${LIMITS.searchMax})`),
      offset: z.number().int().min(0).optional().describe('hits to skip (paging)'),
    },
    outputSchema: {
      query: z.string(), total_hits: z.number().int(), offset: z.number().int(), returned: z.number().int(), has_more: z.boolean(),
      results: z.array(hitSchema),
    },
    annotations: { title: 'Search the knowledge bases', ...readOnly },
  }, (args) => run(ctx, async () => {
    const res = await ctx.reader.search(await ctx.scope(), args.q, args.limit ?? LIMITS.mcpSearchDefault, args.offset ?? 0);
    const out = res;
    const lines = out.results.map((r, i) => `${out.offset + i + 1}. ${r.title} [id: ${r.id}, kb: ${r.kb_id}, score ${r.score}]\n   ${r.snippet}`);
    const head = `${out.total_hits} page(s) match "${out.query}"; showing ${out.returned} from offset ${out.offset}${out.has_more ? ' (more available)' : ''}.`;
    return { structuredContent: out, text: [head, ...lines].join('\n') };
  }));

  server.registerTool('read_page', {
    title: 'Read a page',
    description: `One full page (body up to ${LIMITS.mcpPageBody} characters; body_truncated marks a cut).`,
    inputSchema: { id: pageId },
    outputSchema: pageSchema.shape,
    annotations: { title: 'Read a page', ...readOnly },
  }, (args) => run(ctx, async () => {
    const page = await ctx.reader.page(await ctx.scope(), args.id, LIMITS.mcpPageBody);
    return { structuredContent: page, text: renderPage(page) };
  }));

  server.registerTool('read_pages', {
    title: 'Read several pages',
    description: `Up to ${LIMITS.batchIds} pages in one call (ids beyond ${LIMITS.batchIds} are dropped); each body is cut to ${LIMITS.mcpBatchBody} characters. Ids that do not exist are listed in missing.`,
    inputSchema: { ids: z.array(z.string().trim().min(1).max(200)).min(1).describe(`page ids (at most ${LIMITS.batchIds} are read)`) },
    outputSchema: { pages: z.array(pageSchema), missing: z.array(z.string()) },
    annotations: { title: 'Read several pages', ...readOnly },
  }, (args) => run(ctx, async () => {
    const res = await ctx.reader.pages(await ctx.scope(), args.ids, LIMITS.mcpBatchBody);
    const text = [...res.pages.map(renderPage), ...(res.missing.length ? [`Not found: ${res.missing.join(', ')}`] : [])].join('\n\n---\n\n');
    return { structuredContent: res, text };
  }));

  server.registerTool('list_by_tag', {
    title: 'Pages with a tag',
    description: 'Pages carrying a tag (case-insensitive), by title.',
    inputSchema: {
      tag: z.string().trim().min(1).max(200),
      limit: z.number().int().min(1).max(LIMITS.tagPageMax).optional().describe(`pages to return (default ${LIMITS.tagPageDefault}, at most ${LIMITS.tagPageMax})`),
      offset: z.number().int().min(0).optional(),
    },
    outputSchema: { tag: z.string(), total: z.number().int(), offset: z.number().int(), returned: z.number().int(), has_more: z.boolean(), pages: z.array(summarySchema) },
    annotations: { title: 'Pages with a tag', ...readOnly },
  }, (args) => run(ctx, async () => {
    const res = await ctx.reader.pagesByTag(await ctx.scope(), args.tag, args.limit ?? LIMITS.tagPageDefault, args.offset ?? 0);
    const out = { tag: args.tag, total: res.total, offset: res.offset, returned: res.items.length, has_more: res.has_more, pages: res.items };
    const text = [`${out.total} page(s) tagged "${out.tag}".`, ...out.pages.map((p) => `- ${p.title} [id: ${p.id}]: ${p.summary}`)].join('\n');
    return { structuredContent: out, text };
  }));

  server.registerTool('backlinks', {
    title: 'Pages linking to a page',
    description: 'Pages whose links point at the given page.',
    inputSchema: { id: pageId },
    outputSchema: { id: z.string(), pages: z.array(summarySchema) },
    annotations: { title: 'Pages linking to a page', ...readOnly },
  }, (args) => run(ctx, async () => {
    const pages = await ctx.reader.backlinks(await ctx.scope(), args.id);
    const text = [`${pages.length} page(s) link to ${args.id}.`, ...pages.map((p) => `- ${p.title} [id: ${p.id}]`)].join('\n');
    return { structuredContent: { id: args.id, pages }, text };
  }));

  server.registerTool('get_source', {
    title: 'Source document of a page',
    description: 'The file a page was compiled from, with a download link valid for 1 hour.',
    inputSchema: { id: pageId },
    outputSchema: { r2_key: z.string(), filename: z.string(), locator: z.string(), url: z.string(), url_ttl_secs: z.number().int() },
    annotations: { title: 'Source document of a page', ...readOnly },
  }, (args) => run(ctx, async () => {
    const info = await ctx.reader.source(await ctx.scope(), args.id, ctx.origin);
    return { structuredContent: info, text: `${info.filename} (${info.locator})\n${info.url}\n(link valid ${info.url_ttl_secs} s)` };
  }));

  // A stateless server answering in JSON never sends notifications/tools/list_changed (the SDK advertises it).
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}

/** A tool's answer, or an `isError` result for a refusal; a fault is logged and shown only with its trace id. */
async function run(ctx: ToolContext, fn: () => Promise<{ structuredContent: object; text: string }>): Promise<CallToolResult> {
  try {
    const { structuredContent, text } = await fn();
    return { structuredContent: structuredContent as Record<string, unknown>, content: [{ type: 'text', text }] };
  } catch (err) {
    if (err instanceof GatewayError && err.status < 500) return { isError: true, content: [{ type: 'text', text: err.message }] };
    ctx.log.error('mcp tool failed', { trace: ctx.traceId, err });
    return { isError: true, content: [{ type: 'text', text: `internal error; quote trace id ${ctx.traceId}` }] };
  }
}

function renderPage(p: z.infer<typeof pageSchema>): string {
  const meta = [`id: ${p.id}`, `kb: ${p.kb_id}`, p.tags.length ? `tags: ${p.tags.join(', ')}` : '', `source: ${p.source.filename} ${p.source.locator}`]
    .filter(Boolean).join(' | ');
  return `# ${p.title}\n${meta}\n\n${p.summary ? `> ${p.summary}\n\n` : ''}${p.body}${p.body_truncated ? '\n\n[body truncated]' : ''}`;
}
