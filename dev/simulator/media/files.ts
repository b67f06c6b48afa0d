import type http from 'node:http';
import { makePng } from './bytes';
import { findTemplate } from './clip-templates';
import type { MediaState } from './state';

/**
 * Serves `/files/{key}`: results become readable at their task's due time and
 * answer 403 once their link lifetime (24 h by default) has passed, like a
 * signed object-store URL.
 */
export function serveFile(state: MediaState, key: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const now = state.now();
  let file = state.files.get(key);
  const tpl = /^templates\/([^/]+)\.png$/.exec(key);
  if (!file && tpl && findTemplate(tpl[1])) {
    file = { contentType: 'image/png', availableAt: 0, expiresAt: null, make: () => makePng(key, 16) };
  }
  if (!file || file.availableAt > now) {
    res.writeHead(404, { 'content-type': 'application/xml' });
    res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
    return;
  }
  if (file.expiresAt !== null && file.expiresAt <= now) {
    res.writeHead(403, { 'content-type': 'application/xml' });
    res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
    return;
  }
  const data = file.make();
  const headers: Record<string, string> = { 'content-type': file.contentType, 'content-length': String(data.length), 'cache-control': 'private, max-age=86400' };
  if (file.expiresAt !== null) headers.expires = new Date(file.expiresAt).toUTCString();
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : data);
}
