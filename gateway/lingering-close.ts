import type { IncomingMessage } from 'node:http';

/** How long, and how much, a connection answered before its request body was read whole keeps reading after the answer. */
const LINGER_MS = 2_000;
const LINGER_BYTES = 64 * 1024 ** 2;

/**
 * An answer that closes the connection before the request's body was read whole (a 413 over the
 * size limit, a 408 on a stalled upload): Node's server closes the socket as soon as the answer is
 * out, and closing with unread bytes makes the kernel send a reset, which can reach the client while
 * it is still writing, before it has read the answer (it then sees a broken pipe, not the 413). Here
 * the answer and its FIN go out first, then what the client still sends is read and dropped until it
 * closes its side, for at most LINGER_MS or LINGER_BYTES (nginx's lingering close, for the same
 * reason); then the socket is destroyed. Call before the answer is written.
 */
export function lingerAfterAnswer(req: IncomingMessage): void {
  const socket = req.socket;
  if (req.complete || socket.destroyed) return;
  socket.destroySoon = () => {
    let dropped = 0;
    const stop = () => socket.destroy();
    const timer = setTimeout(stop, LINGER_MS);
    socket.once('close', () => clearTimeout(timer));
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER_BYTES) stop();
    });
    req.resume();
    socket.end();
  };
}
