import type { z } from 'zod';
import type { ErrorFamily } from './errors';

/**
 * One operation of the public or management API, as the OpenAPI document
 * describes it. The schemas are the zod schemas the route validates with
 * (exported from the route or request module), so the document cannot drift
 * from the validation: `gateway/openapi/document.ts` turns them into JSON Schema with
 * zod 4's own `z.toJSONSchema` (input side).
 */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI path, parameters as `{name}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /**
   * Who may call it: `key` (API key, the four methods of spec 1 section 5),
   * `key-header` (Bearer or x-api-key only), `admin` (the operator token),
   * `key-or-admin` (either: the call log), `none` (public), `signed` (a
   * signed link is the credential).
   */
  auth: 'key' | 'key-header' | 'admin' | 'key-or-admin' | 'none' | 'signed';
  /** Error body shape of the family (spec 1 section 7). */
  errors: ErrorFamily;
  /** Error statuses worth naming; every other status is the `default` response in the same shape. */
  errorStatuses: number[];
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** The route reads an empty query value (`?status=`) as absent (`first` in capabilities/media/list-query.ts). */
  emptyQueryIsAbsent?: boolean;
  /** Extra request headers (Idempotency-Key, anthropic-version, X-Acting-User). */
  headers?: Array<{ name: string; description: string; schema: Record<string, unknown>; required?: boolean }>;
  /** `multipart: true`: JSON or multipart/form-data; `'only'`: multipart/form-data only, described by `schema`. */
  body?: { schema: z.ZodType; example?: unknown; multipart?: boolean | 'only'; required?: boolean };
  /** Success responses by status. `schema` absent: a JSON object; `contentType: null`: no body. */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string | null }>;
}

/** Statuses every key-authenticated route may answer. */
export const KEY_ERRORS = [400, 401, 429];
/** Plus the charging and model checks of a billable route. */
export const BILLABLE_ERRORS = [400, 401, 402, 413, 429, 503];
/** The idempotency refusals of a charging POST (spec 2 section 4.1). */
export const IDEMPOTENT_ERRORS = [...BILLABLE_ERRORS, 409];

export const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  description: '1 to 200 printable ASCII characters; the same key and body replay the first answer (Idempotency-Replayed: true), for 7 days, scoped to the account',
  schema: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x20-\\x7E]+$' },
};
