import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../domain/errors';
import { newRequestId } from '../platform/ids';
import type { Logger } from '../platform/logger';
import { errorBody, shapeOfPath } from './errors/shapes';
import { TRACE_HEADER } from './middleware/trace';

/**
 * Requests Node's HTTP parser refuses before Koa sees them (a header block
 * over the size limit, a malformed request line or header, a header that
 * did not arrive in time) get a real answer instead of Node's bare status
 * line: the status, an error body in the shape of the endpoint named in the
 * request line (spec 1 section 7), `x-gateway-trace`, and a closed
 * connection. Attach to every server that serves `createApp`.
 */
export function answerClientErrors(server: Server, log?: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, message } = refusal(err);
    const requestLine = /^[A-Z]{3,10} (\S+) HTTP\//.exec(err.rawPacket?.toString('latin1') ?? '');
    const path = (requestLine?.[1] ?? '/').split('?')[0];
    const trace = newRequestId();
    const body = JSON.stringify(errorBody(new GatewayError('invalid_request', message, { status }), shapeOfPath(path)));
    log?.info('request refused by the HTTP parser', { trace, status, code: err.code });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n${TRACE_HEADER}: ${trace}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}

function refusal(err: NodeJS.ErrnoException): { status: number; message: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'request headers are too large (at most 16 KB in all)' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return { status: 408, message: 'request headers did not arrive in time' };
    default:
      return { status: 400, message: `malformed HTTP request (${err.code ?? 'parse error'})` };
  }
}
