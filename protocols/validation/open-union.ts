import { z } from 'zod';

/**
 * A union keyed by `type` that checks the variants we know and lets unknown
 * ones through untouched: vendors add block types often and the gateway
 * forwards bytes, so refusing a type we have not heard of would break
 * clients for nothing. A known type with a bad shape still fails on its field.
 */
export function openUnion<const T extends readonly [z.ZodObject, ...z.ZodObject[]]>(known: T) {
  const names = new Set<string>();
  for (const schema of known) {
    const literal = schema.shape.type;
    for (const v of (literal as z.ZodLiteral).values) names.add(String(v));
  }
  const other = z.looseObject({
    type: z.string().refine((t) => !names.has(t), { message: 'Invalid input', abort: true }),
  });
  return z.union([z.discriminatedUnion('type', known), other]);
}
