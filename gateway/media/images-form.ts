import { createHash } from 'node:crypto';
import { errors } from '../../domain/errors';
import type { FormPart } from './multipart';

/**
 * Images edits as multipart/form-data (spec 2 section 4.3), the way OpenAI's
 * SDKs send it: files in `image` (several as `image[]`), text fields passed
 * through. Files become `data:` URIs; reference images keep the form's order
 * (`image` parts, files and URLs alike, then `image_urls`). Form values are
 * text, so the fields the JSON body types as numbers or booleans are
 * converted (`n`, `async=true`, ...); anything else stays a string.
 */
const NUMBER_FIELDS = new Set(['n', 'seed', 'output_compression', 'partial_images', 'guidance_scale']);
const BOOLEAN_FIELDS = new Set(['async', 'watermark', 'stream']);

/** Magic numbers of the image formats vendors accept, for files sent as application/octet-stream. */
function sniffImageType(data: Buffer): string | null {
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return null;
}

function fileDataUri(part: Extract<FormPart, { kind: 'file' }>): string {
  if (part.data.length === 0) throw errors.invalidRequest(`${part.name}: the file ${JSON.stringify(part.filename)} is empty`, part.name);
  const type = /^image\/[a-z0-9.+-]+$/i.test(part.contentType) ? part.contentType.toLowerCase() : sniffImageType(part.data);
  if (!type) throw errors.invalidRequest(`${part.name}: the file ${JSON.stringify(part.filename)} is not a PNG, JPEG, WEBP or GIF image`, part.name);
  return `data:${type};base64,${part.data.toString('base64')}`;
}

function typed(name: string, value: string): unknown {
  if (NUMBER_FIELDS.has(name) && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  if (BOOLEAN_FIELDS.has(name) && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  return value;
}

/** The JSON-shaped images body a form stands for. */
export function formToImagesBody(parts: FormPart[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const image: string[] = [];
  const imageUrls: string[] = [];
  for (const part of parts) {
    const name = part.name.endsWith('[]') ? part.name.slice(0, -2) : part.name;
    const value = part.kind === 'file' ? fileDataUri(part) : part.value;
    if (name === 'image') image.push(value);
    else if (name === 'image_urls') imageUrls.push(value);
    else if (part.kind === 'file') body[name] = value; // e.g. an edits `mask`
    else if (part.name.endsWith('[]')) body[name] = [...((body[name] as unknown[] | undefined) ?? []), typed(name, value)];
    else body[name] = typed(name, value);
  }
  if (image.length) body.image = image;
  if (imageUrls.length) body.image_urls = imageUrls;
  return body;
}

/**
 * What the Idempotency-Key compares for a form: its content, not its bytes
 * (each send has a new random boundary). Files count by their digest.
 */
export function canonicalForm(parts: FormPart[]): Buffer {
  const items = parts.map((p) =>
    p.kind === 'field' ? [p.name, p.value] : [p.name, `file:${p.contentType}:${createHash('sha256').update(p.data).digest('hex')}`],
  );
  return Buffer.from(JSON.stringify({ multipart: items }));
}
