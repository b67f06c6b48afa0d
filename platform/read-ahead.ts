/**
 * A body read while its reader is not ready yet. An undici response body left unread keeps what arrived
 * in its buffer, but drops it when the connection then fails (a destroyed stream yields nothing more,
 * only the error): a stream held while the call waits for something else (its key's fresh state,
 * gateway/chat/pipeline.ts) would lose the chunks the upstream sent before it cut the stream. ReadAhead
 * pulls the chunks as they come into a list, up to `limitBytes` (then it waits, so the upstream is held
 * back as by the unread stream), and `chunks()` hands them over first, then reads on from the body
 * itself: the first byte is not delayed by a read that is still pending, and a failure is thrown after
 * the chunks that came before it, in the order it happened. A reader that stops early releases the body
 * (`release`), as leaving a `for await` over the body itself would.
 */
export class ReadAhead<T extends { length: number }> {
  private readonly it: AsyncIterator<T>;
  private readonly got: T[] = [];
  private bytes = 0;
  private reading = true;
  private done = false;
  private failed = false;
  private failure: unknown;
  /** The read under way, settled once its chunk is in `got` (or the end or failure recorded). */
  private pending: Promise<void> | undefined;

  constructor(
    body: AsyncIterable<T>,
    private readonly opts: { limitBytes?: number; release?: () => void } = {},
  ) {
    this.it = body[Symbol.asyncIterator]();
    this.next();
  }

  private next(): void {
    this.pending = this.it.next().then(
      (r) => {
        this.pending = undefined;
        if (r.done) {
          this.done = true;
          return;
        }
        this.got.push(r.value);
        this.bytes += r.value.length;
        if (this.reading && this.bytes < (this.opts.limitBytes ?? 1 << 20)) this.next();
      },
      (err: unknown) => {
        this.pending = undefined;
        this.failed = true;
        this.failure = err;
      },
    );
  }

  /** The chunks read ahead, then the rest of the body; call once. */
  async *chunks(): AsyncGenerator<T, void, undefined> {
    this.reading = false;
    let ended = false;
    try {
      let i = 0;
      for (;;) {
        if (i < this.got.length) {
          const chunk = this.got[i];
          this.got[i++] = undefined as never;
          yield chunk;
          continue;
        }
        if (this.failed) throw this.failure;
        if (this.done) break;
        if (!this.pending) {
          const it = this.it;
          yield* { [Symbol.asyncIterator]: () => it };
          break;
        }
        await this.pending;
      }
      ended = true;
    } finally {
      // Stopped before the body's end (the reader left, or the body failed): the body is let go.
      if (!ended) this.opts.release?.();
    }
  }
}
