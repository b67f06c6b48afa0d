import type { MediaSource } from '../canonical/request';

const DATA_URI = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

/** `data:image/png;base64,AAA` -> base64 source; any other URL -> url source. */
export function mediaFromUrl(url: string): MediaSource {
  const m = DATA_URI.exec(url);
  if (m) return { kind: 'base64', mediaType: m[1], data: m[2] };
  return { kind: 'url', url };
}

/** A source as a URL: data URI for inline bytes. */
export function mediaToUrl(source: MediaSource): string {
  return source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.data}`;
}

const BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
};

/** Best guess of a URL's media type from its extension (Gemini's fileData wants one). */
export function guessMediaType(url: string, fallback: string): string {
  const path = url.split(/[?#]/, 1)[0];
  const dot = path.lastIndexOf('.');
  const ext = dot === -1 ? '' : path.slice(dot + 1).toLowerCase();
  return BY_EXTENSION[ext] ?? fallback;
}
