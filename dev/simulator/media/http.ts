import type http from 'node:http';
import Busboy from 'busboy';

/** Largest request body the simulator accepts (the spec's edits limit is 95 MB). */
export const MAX_BODY_BYTES = 100 * 1024 * 1024;

export interface UploadedFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: number;
  data: Buffer;
}

/** A parsed request body: JSON object, multipart form, or nothing. */
export type ParsedBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'multipart'; fields: Record<string, string | string[]>; files: UploadedFile[] }
  | { kind: 'empty' }
  | { kind: 'invalid'; reason: string };

export function readRaw(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseMultipart(req: http.IncomingMessage): Promise<ParsedBody> {
  return new Promise((resolve) => {
    const fields: Record<string, string | string[]> = {};
    const files: UploadedFile[] = [];
    let bb: Busboy.Busboy;
    try {
      bb = Busboy({ headers: req.headers, limits: { fileSize: MAX_BODY_BYTES } });
    } catch (err) {
      resolve({ kind: 'invalid', reason: (err as Error).message });
      return;
    }
    bb.on('field', (name, value) => {
      const prev = fields[name];
      if (prev === undefined) fields[name] = value;
      else fields[name] = Array.isArray(prev) ? [...prev, value] : [prev, value];
    });
    bb.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const data = Buffer.concat(chunks);
        files.push({ field, filename: info.filename, contentType: info.mimeType, bytes: data.length, data });
      });
    });
    bb.on('close', () => resolve({ kind: 'multipart', fields, files }));
    bb.on('error', (err) => resolve({ kind: 'invalid', reason: (err as Error).message }));
    req.pipe(bb);
  });
}

/** Reads the body as JSON or multipart/form-data depending on content-type. */
export async function readBody(req: http.IncomingMessage): Promise<ParsedBody> {
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('multipart/form-data')) return parseMultipart(req);
  const raw = await readRaw(req);
  if (raw.length === 0) return { kind: 'empty' };
  try {
    return { kind: 'json', value: JSON.parse(raw.toString('utf8')) };
  } catch {
    return { kind: 'invalid', reason: 'request body is not valid JSON' };
  }
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

export function sendBytes(res: http.ServerResponse, status: number, contentType: string, data: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(data.length), ...headers });
  res.end(data);
}

export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Request headers flattened to strings, for the control API's task record. */
export function flatHeaders(req: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
