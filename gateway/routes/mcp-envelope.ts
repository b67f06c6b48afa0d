import type { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * What the MCP SDK's transport (1.32) answers differently from the protocol
 * about a POST body, decided here before the transport sees the body:
 *
 * - valid JSON that is not a JSON-RPC message (`{"hello":"world"}`, a request
 *   with `id: null`) is -32600 Invalid Request, not -32700 Parse error
 *   (JSON-RPC 2.0 section 5.1; the SDK says -32700);
 * - an empty batch `[]` is one -32600 (JSON-RPC 2.0 section 6; the SDK answers
 *   202 with no body);
 * - a batch is -32600 under `MCP-Protocol-Version` 2025-06-18 or later, which
 *   removed batching ("The body of the POST request MUST be a single JSON-RPC
 *   request, notification, or response"); without the header a server assumes
 *   2025-03-26, which had batches, so they are still answered then;
 * - `tools/call` of a tool the server does not have is the JSON-RPC error
 *   -32602 (MCP 2025-06-18, server/tools "Error Handling": unknown tools are a
 *   protocol error), not the SDK's `isError` tool result. Only a single message
 *   is checked: a legacy batch keeps the SDK's answer.
 *
 * Invalid JSON stays -32700, as the SDK answers it.
 */
export type Envelope =
  | { ok: true; body: unknown }
  | { ok: false; status: number; reply: { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } } };

/** The first MCP protocol version without JSON-RPC batching. */
const NO_BATCHES_FROM = '2025-06-18';

const refuse = (status: number, code: number, message: string, id: string | number | null = null): Envelope => ({
  ok: false, status, reply: { jsonrpc: '2.0', id, error: { code, message } },
});

export function checkEnvelope(
  raw: string,
  protocolVersion: string | undefined,
  tools: ReadonlySet<string>,
  schema: typeof JSONRPCMessageSchema,
): Envelope {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return refuse(400, -32700, 'Parse error: Invalid JSON');
  }
  if (Array.isArray(body)) {
    if (body.length === 0) return refuse(400, -32600, 'Invalid Request: empty batch');
    if (protocolVersion && protocolVersion >= NO_BATCHES_FROM) {
      return refuse(400, -32600, `Invalid Request: MCP ${protocolVersion} has no JSON-RPC batches; send one message per POST`);
    }
    if (!body.every((m) => schema.safeParse(m).success)) return refuse(400, -32600, 'Invalid Request: a batch member is not a JSON-RPC 2.0 message');
    return { ok: true, body };
  }
  if (!schema.safeParse(body).success) return refuse(400, -32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response');
  const msg = body as { id?: string | number; method?: string; params?: { name?: unknown } };
  if (msg.method === 'tools/call' && msg.id !== undefined && typeof msg.params?.name === 'string' && !tools.has(msg.params.name)) {
    return refuse(200, -32602, `Unknown tool: ${msg.params.name}`, msg.id);
  }
  return { ok: true, body };
}
