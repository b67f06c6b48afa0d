import type Koa from 'koa';

type SetHeader = (this: Koa.Response, field: unknown, val?: unknown) => void;

/**
 * Koa's `ctx.set` with the same rule and no garbage. Koa 3 builds an entries array, a mapped copy and one
 * array per header on every call; a chat call makes five (trace, limits, cost, type, length): 3.7 KB a
 * call of the gateway's 88 KB (a V8 allocation profile at 64 clients). A string or number value goes
 * straight to `setHeader`, as Koa's does; an array value (a singleton Content-Type or Content-Length must
 * be unwrapped, and Koa asserts it) takes Koa's own path.
 */
export function leanHeaderSetter(app: Koa<any, any>): void {
  const response = app.response as unknown as { set: SetHeader };
  const koaSet = response.set;
  response.set = function set(this: Koa.Response, field: unknown, val?: unknown): void {
    if (this.headerSent || !field) return;
    if (typeof field === 'string') {
      if (typeof val === 'string' || typeof val === 'number') this.res.setHeader(field, val);
      else koaSet.call(this, field, val);
      return;
    }
    const fields = field as Record<string, unknown>;
    for (const name in fields) {
      const v = fields[name];
      if (typeof v === 'string' || typeof v === 'number') this.res.setHeader(name, v);
      else koaSet.call(this, name, v);
    }
  };
}

/**
 * Node keeps a response's head (`res._header`) for the life of the response, as the string it built one
 * header at a time: a rope of some 45 small strings (about 1.5 KB) where the text itself is 250 bytes.
 * Reading a character makes V8 flatten it in place, so a long-lived answer (a stream) holds its head as
 * one flat string. Call once the head is stored (after `writeHead`); without the property it does nothing.
 */
export function flattenStoredHead(res: object): void {
  const head = (res as { _header?: unknown })._header;
  if (typeof head === 'string' && head.length > 0) head.charCodeAt(head.length - 1);
}
