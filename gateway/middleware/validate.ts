import type { z } from 'zod';
import { parseInput } from '../../domain/validation';
import type { Ctx } from '../context';

/**
 * Request validation, one function per input kind (the model is Hono's
 * `validator('json' | 'query' | 'param', ...)`): each parses its input with a
 * zod schema and returns it typed, or throws the one 400 `invalid_request`
 * naming the field (domain/validation.ts). The error handler renders it in
 * the endpoint's shape.
 *
 *   const req = validBody(ctx, TopUp);             // after jsonBody(limit)
 *   const { from, to } = validQuery(ctx, Window);  // dates: InstantString (domain/instant.ts)
 *   const { id } = validParams(ctx, z.object({ id: z.string().min(1) }));
 */
export function validBody<S extends z.ZodType>(ctx: Ctx, schema: S): z.output<S> {
  return parseInput('body', schema, ctx.state.body);
}

/** Query values are strings (or arrays of strings when repeated): use z.coerce / InstantString. */
export function validQuery<S extends z.ZodType>(ctx: Ctx, schema: S): z.output<S> {
  return parseInput('query', schema, { ...ctx.query });
}

/** Path parameters, already percent-decoded by the router (malformed escapes never get here: gateway/middleware/url-policy.ts). */
export function validParams<S extends z.ZodType>(ctx: Ctx, schema: S): z.output<S> {
  return parseInput('params', schema, { ...(ctx as Ctx & { params?: Record<string, string> }).params });
}

