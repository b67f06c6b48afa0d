import Busboy from 'busboy';
import { errors, GatewayError } from '../../domain/errors';
import type { Ctx } from '../context';
import { bodyDeadline, bodyTooLarge } from '../middleware/body';

/** One part of a multipart/form-data body, in arrival order. */
export type FormPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; contentType: string; data: Buffer };

export const isMultipart = (ctx: Ctx): boolean => /^multipart\/form-data\b/i.test(ctx.get('content-type'));

/**
 * Read a multipart/form-data body (busboy), keeping every part in order.
 * The whole body counts against `limitBytes` (413 beyond; a declared
 * Content-Length above it is refused before reading).
 */
export async function readMultipart(ctx: Ctx, limitBytes: number): Promise<FormPart[]> {
  if (Number(ctx.get('content-length') || 0) > limitBytes) throw new GatewayError('invalid_request', bodyTooLarge(limitBytes).message, { status: 413, headers: { Connection: 'close' } });
  let bb: Busboy.Busboy;
  try {
    bb = Busboy({ headers: ctx.req.headers, limits: { fileSize: limitBytes, fieldSize: limitBytes, files: 100, fields: 1000 } });
  } catch (err) {
    throw errors.invalidRequest(`multipart body: ${(err as Error).message}`);
  }
  return new Promise<FormPart[]>((resolve, reject) => {
    const parts: FormPart[] = [];
    let size = 0;
    let failed = false;
    const fail = (err: GatewayError) => {
      if (failed) return;
      failed = true;
      deadline.stop();
      ctx.req.unpipe(bb);
      ctx.req.resume(); // drain the rest so the answer reaches the client
      reject(err);
    };
    // Slow-loris uploads: a stalled or trickling body gets a 408 and its connection closed.
    const deadline = bodyDeadline(ctx, fail);
    ctx.req.on('data', (chunk: Buffer) => {
      deadline.touch();
      size += chunk.length;
      if (size > limitBytes) fail(bodyTooLarge(limitBytes));
    });
    ctx.req.on('error', (err) => fail(errors.invalidRequest(`request body could not be read: ${err.message}`)));
    ctx.req.on('close', () => {
      if (!ctx.req.complete) fail(errors.invalidRequest('the client closed the connection before the body was complete'));
    });
    // A part whose Content-Disposition names no field cannot be placed in the request: a 400, not a crash later.
    const unnamed = () => fail(errors.invalidRequest('every multipart part needs a name (Content-Disposition: form-data; name="...")'));
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(bodyTooLarge(limitBytes));
      if (typeof name !== 'string' || name === '') return unnamed();
      parts.push({ kind: 'field', name, value });
    });
    bb.on('file', (name, stream, info) => {
      if (typeof name !== 'string' || name === '') {
        stream.resume();
        return unnamed();
      }
      const chunks: Buffer[] = [];
      const part: FormPart = { kind: 'file', name, filename: info.filename ?? '', contentType: info.mimeType, data: Buffer.alloc(0) };
      parts.push(part); // keeps the arrival order even though the bytes come later
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => fail(bodyTooLarge(limitBytes)));
      stream.on('end', () => {
        part.data = Buffer.concat(chunks);
      });
    });
    bb.on('error', (err) => fail(errors.invalidRequest(`multipart body is malformed: ${(err as Error).message}`)));
    bb.on('close', () => {
      deadline.stop();
      if (!failed) resolve(parts);
    });
    ctx.req.pipe(bb);
  });
}
