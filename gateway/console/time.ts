import { html, type Html } from './html';

/**
 * One way to show a moment: the server writes UTC ("2026-11-27 15:04 UTC")
 * inside a <time> whose title keeps the UTC text; console.js rewrites the text
 * in the browser's own zone ("27 Nov 2026, 16:04 CET"), so every page shows
 * the reader's time, and UTC on hover.
 */
export function utcText(d: Date, seconds = false): string {
  return d.toISOString().replace('T', ' ').slice(0, seconds ? 19 : 16) + ' UTC';
}

export function when(d: Date | number | string | null | undefined, opts: { seconds?: boolean; empty?: string } = {}): Html {
  if (d === null || d === undefined || d === '') return html`${opts.empty ?? ''}`;
  const date = d instanceof Date ? d : new Date(d);
  if (Number.isNaN(date.getTime())) return html`${opts.empty ?? ''}`;
  const utc = utcText(date, opts.seconds);
  return html`<time datetime="${date.toISOString()}" title="${utc}"${opts.seconds ? html` data-seconds` : ''}>${utc}</time>`;
}
