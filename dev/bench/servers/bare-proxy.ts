/**
 * Baseline: the least a proxy hop can cost here. A bare Koa app that forwards the request body to one
 * upstream through an undici Pool and relays the answer's bytes (streams included), with no auth,
 * limits, parsing or billing. bench:chat measures it beside the gateway, so the gateway's own share
 * of the added latency is what it adds over this.
 *   PORT=... UPSTREAM=http://127.0.0.1:<sim>/ch/openai-a node --import tsx dev/bench/servers/bare-proxy.ts
 */
import Koa from 'koa';
import { Pool } from 'undici';

const upstream = new URL(process.env.UPSTREAM!);
const pool = new Pool(upstream.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
const app = new Koa();
app.use(async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const c of ctx.req) chunks.push(c as Buffer);
  const res = await pool.request({
    path: upstream.pathname + ctx.path,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer upstream' },
    body: Buffer.concat(chunks),
  });
  ctx.status = res.statusCode;
  const type = res.headers['content-type'];
  if (typeof type === 'string') ctx.type = type;
  ctx.body = res.body;
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
server.keepAliveTimeout = 30_000;
