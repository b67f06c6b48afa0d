// Small node:http helpers shared by the chat routes, the control API and any
// extra handler (media routes can import them too).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export const MAX_BODY_BYTES = 64 * 1024 * 1024;

export class BodyTooLarge extends Error {}

/** The whole request body as a string (UTF-8). */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLarge('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      resolve(chunks.length === 1 ? chunks[0].toString('utf8') : chunks.length === 0 ? '' : Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

export const JSON_TYPE = 'application/json';

/** Send a complete body with Content-Length; `headers` is a flat [name, value, ...] list. */
export function sendBody(res: ServerResponse, status: number, body: string, contentType = JSON_TYPE, headers?: readonly string[]): void {
  if (res.destroyed) return;
  const h: string[] = ['content-type', contentType, 'content-length', String(Buffer.byteLength(body))];
  if (headers) for (let i = 0; i < headers.length; i++) h.push(headers[i]);
  res.writeHead(status, h);
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers?: readonly string[]): void {
  sendBody(res, status, JSON.stringify(value), JSON_TYPE, headers);
}

/** Write `data`, then drop the TCP connection once the bytes have left (a mid-body failure). */
export function writeThenDestroy(res: ServerResponse, data: string | Buffer): void {
  const sock = res.socket as Socket | null;
  if (!sock || res.destroyed) return;
  const kill = () => sock.destroy();
  if (data.length > 0) res.write(data, kill);
  else {
    res.flushHeaders();
    sock.write('', kill);
  }
}

/** Send half of `body` (Content-Length announces all of it), then drop the connection. */
export function sendHalfThenDestroy(res: ServerResponse, status: number, body: string, contentType = JSON_TYPE, headers?: readonly string[]): void {
  const buf = Buffer.from(body, 'utf8');
  const h: string[] = ['content-type', contentType, 'content-length', String(buf.length)];
  if (headers) for (let i = 0; i < headers.length; i++) h.push(headers[i]);
  res.writeHead(status, h);
  writeThenDestroy(res, buf.subarray(0, Math.floor(buf.length / 2)));
}

/** Destroy the socket with a TCP RST (ECONNRESET on the client) and no response. */
export function resetSocket(req: IncomingMessage): void {
  const sock = req.socket as Socket & { resetAndDestroy?: () => Socket };
  if (typeof sock.resetAndDestroy === 'function') sock.resetAndDestroy();
  else sock.destroy();
}

/** Resolve after `ms` (immediately when 0); resolves false if the client went away. */
export function delay(res: ServerResponse, ms: number): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(!res.destroyed);
  return new Promise((resolve) => {
    const onClose = () => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      res.off('close', onClose);
      resolve(!res.destroyed);
    }, ms);
    res.once('close', onClose);
  });
}
