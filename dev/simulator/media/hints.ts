/**
 * Deterministic output lengths. A media URL may carry its length as a `dur`
 * query parameter (`https://x/a.mp3?dur=7` is 7 s); spoken text lasts one
 * second per 15 characters, rounded up.
 */

export const CHARS_PER_SECOND = 15;

export function durationHint(url: unknown): number | null {
  if (typeof url !== 'string') return null;
  try {
    const raw = new URL(url).searchParams.get('dur');
    const n = raw === null ? NaN : Number(raw);
    return Number.isFinite(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

export function textSeconds(text: string): number {
  return Math.max(1, Math.ceil([...text].length / CHARS_PER_SECOND));
}

/** Value of a `--name value` flag inside a prompt, e.g. `--dur 8` or `--ratio 16:9`. */
export function promptFlag(text: string, names: string[]): string | null {
  for (const name of names) {
    const m = new RegExp(`(?:^|\\s)--${name}\\s+(\\S+)`).exec(text);
    if (m) return m[1];
  }
  return null;
}

/** Parses `WxH`; null when malformed. */
export function parseSize(size: string): { width: number; height: number } | null {
  const m = /^(\d{2,5})x(\d{2,5})$/.exec(size);
  if (!m) return null;
  return { width: Number(m[1]), height: Number(m[2]) };
}

export function isDataUri(ref: string): boolean {
  return /^data:image\/[a-z0-9.+-]+;base64,/i.test(ref);
}

export function isHttpUrl(ref: string): boolean {
  return /^https?:\/\/\S+$/i.test(ref);
}
