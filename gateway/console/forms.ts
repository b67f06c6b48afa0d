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
  const text = message.replace(/^[\w.\[\]]+: /, '').replace(/\b([a-z]+)_([a-z_]+)\b/g, (m) => m.replace(/_/g, ' ').replace(/ usd$/, ''));
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A refusal from a service or a schema, as field errors: the error's `param`
 * (its first path segment) names the field; the message shown is the form's
 * own sentence for that field, else the service's in plain words.
 */
export function fieldErrors(err: unknown, fields: readonly string[], human: HumanMessages = {}): FieldErrors {
  if (!(err instanceof GatewayError) || err.status >= 500) throw err;
  const field = err.param?.split('.')[0];
  // The form's sentence replaces a validation message; a rule's own refusal (wrong password, over a limit) keeps its words.
  const own = err.status === 400 && field ? human[field] : undefined;
  if (field && fields.includes(field)) return { [field]: own ?? plainMessage(err.message) };
  return { _form: own ?? (err.status === 400 ? human._form : undefined) ?? plainMessage(err.message) };
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
