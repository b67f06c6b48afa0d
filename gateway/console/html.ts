import escapeHtml from 'escape-html';

/**
 * HTML built from tagged templates: every interpolated value is escaped
 * unless it is itself an `Html` (another template or `raw()`), so a page
 * cannot inject markup from data. Arrays are joined.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Value = Html | string | number | boolean | null | undefined | Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Trusted markup (never data). */
export const raw = (s: string): Html => new Html(s);
