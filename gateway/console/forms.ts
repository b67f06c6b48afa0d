import type { z } from 'zod';
import { GatewayError } from '../../domain/errors';
import { readRaw } from '../middleware/body';
import type { Ctx } from '../context';
import { html, type Html } from './html';

/** Errors of one form: by field name, and `_form` for the ones no field owns. */
export type FieldErrors = Record<string, string>;

export const FORM_LIMIT_BYTES = 64 * 1024;

/** Parse an urlencoded body; a repeated name becomes an array. */
export async function readForm(ctx: Ctx): Promise<Record<string, string | string[]>> {
  const type = ctx.get('content-type');
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return {};
  const raw = await readRaw(ctx, FORM_LIMIT_BYTES);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? '')).trim();
export const many = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * What a person reads for a refused field: the form's own sentence for that
 * field (`human`), never a schema message or a field name. A field without
 * its own sentence gets the service's message with any `field_name: ` prefix
 * and schema wording taken out.
 */
export type HumanMessages = Record<string, string>;

const SCHEMA_WORDING = /\b(invalid input|expected \w+|received \w+|too (small|big)|zod|invalid (option|type|enum)|unrecognized key)/i;

/** A service's message, in words: no `field_name:` prefix, snake_case names become words. */
export function plainMessage(message: string, fallback = 'That did not work; check the form and try again.'): string {
  if (SCHEMA_WORDING.test(message)) return fallback;
  const text = message.replace(/^[\w.\[\]]+: /, '').replace(/`([^`]*)`/g, '$1').replace(/\b([a-z]+)_([a-z_]+)\b/g, (m) => m.replace(/_/g, ' ').replace(/ usd$/, ''));
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A refusal from a service or a schema, as field errors: the error's `param`
 * (its first path segment) names the field; the message shown is the form's
 * own sentence for that field, else the service's in plain words.
 */
export function fieldErrors(err: unknown, fields: readonly string[], human: HumanMessages = {}): FieldErrors {
  if (err instanceof FormRefused) return err.errors;
  if (!(err instanceof GatewayError) || err.status >= 500) throw err;
  const field = err.param?.split('.')[0];
  // The form's sentence replaces a validation message; a rule's own refusal (wrong password, over a limit) keeps its words.
  const own = err.status === 400 && field ? human[field] : undefined;
  if (field && fields.includes(field)) return { [field]: own ?? plainMessage(err.message) };
  return { _form: own ?? (err.status === 400 ? human._form : undefined) ?? plainMessage(err.message) };
}

/** Several fields refused at once: a form checked in full before anything is done (`parseForm`). */
export class FormRefused extends Error {
  constructor(readonly errors: FieldErrors) {
    super('form refused');
  }
}

/**
 * The form's values through the API's schema, or every refused field at once
 * (`found`: the form's own checks, first), each with the form's sentence for
 * that field; thrown as `FormRefused`, which `fieldErrors` hands back as is.
 */
export function parseForm<S extends z.ZodType>(schema: S, value: unknown, fields: readonly string[], human: HumanMessages, found: FieldErrors = {}): z.output<S> {
  const r = schema.safeParse(value);
  const errors: FieldErrors = { ...found };
  for (const issue of r.success ? [] : r.error.issues) {
    const name = String(issue.path[0] ?? '');
    errors[fields.includes(name) ? name : '_form'] ??= human[name] ?? human._form ?? plainMessage(issue.message);
  }
  if (Object.keys(errors).length > 0 || !r.success) throw new FormRefused(errors);
  return r.data;
}

/** A GET form's query (a filter form): empty fields left out. */
export function queryValues(ctx: Ctx): Record<string, string> {
  return Object.fromEntries(Object.entries(ctx.query).filter(([, v]) => typeof v === 'string' && v !== '')) as Record<string, string>;
}

export function errorFor(errors: FieldErrors | undefined, name: string): Html {
  const e = errors?.[name];
  return e ? html`<p class="field-error" id="err-${name}" role="alert">${e}</p>` : html``;
}

export function formError(errors: FieldErrors | undefined): Html {
  return errors?._form ? html`<p class="form-error" role="alert">${errors._form}</p>` : html``;
}

/** A labelled input with its error under it. */
export function field(opts: {
  name: string; label: string; value?: string; type?: string; required?: boolean; placeholder?: string;
  hint?: string; errors?: FieldErrors; attrs?: Html; autocomplete?: string;
}): Html {
  const err = opts.errors?.[opts.name];
  return html`<div class="field${err ? ' has-error' : ''}">
  <label for="f-${opts.name}">${opts.label}</label>
  <input id="f-${opts.name}" name="${opts.name}" type="${opts.type ?? 'text'}" value="${opts.value ?? ''}"${opts.required ? html` required` : ''}${
    opts.placeholder ? html` placeholder="${opts.placeholder}"` : ''}${opts.autocomplete ? html` autocomplete="${opts.autocomplete}"` : ''}${
    err ? html` aria-invalid="true" aria-describedby="err-${opts.name}"` : ''} ${opts.attrs ?? ''}>
  ${opts.hint ? html`<p class="hint">${opts.hint}</p>` : ''}
  ${errorFor(opts.errors, opts.name)}
</div>`;
}

export function csrfInput(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}
