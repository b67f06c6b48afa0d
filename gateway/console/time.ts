import { z } from 'zod';
import { GatewayError } from '../../domain/errors';
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

const DAY_MS = 86_400_000;

/** A UTC day of a filter form (`YYYY-MM-DD`), one that is on the calendar (no 2026-13-45, no 30 February). */
export const Day = z.string().refine((s) => {
  const t = /^\d{4}-\d{2}-\d{2}$/.test(s) ? Date.parse(`${s}T00:00:00Z`) : NaN;
  return Number.isFinite(t) && new Date(t).toISOString().startsWith(s);
}, 'must be a date (YYYY-MM-DD)');

/**
 * The days `from` to `to` (both included) as [start, end); without `to`, and with `defaultWindowMs`,
 * the window ending now. A start after the end is refused in words, for the whole form.
 */
export function dayRange(from: string | undefined, to: string | undefined, defaultWindowMs?: number): { from?: Date; to?: Date } {
  const end = to ? new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS) : defaultWindowMs ? new Date() : undefined;
  const start = from ? new Date(`${from}T00:00:00Z`) : end && defaultWindowMs ? new Date(end.getTime() - defaultWindowMs) : undefined;
  if (start && end && start >= end) throw new GatewayError('invalid_request', 'The start date is after the end date: pick a start on or before the end.');
  return { from: start, to: end };
}
