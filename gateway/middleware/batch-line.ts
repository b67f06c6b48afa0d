import type { Ctx, Middleware } from '../context';
import { TRACE_HEADER } from './trace';
import { BATCH_LINE_HEADER, lineRequestId, verify } from '../../capabilities/batches/line-auth';

/** First in the chat chain: a signed batch line takes its line's request id (gateway/chat/settle.ts prices it as a line only for the key it was signed for). */
export function batchLine(keyEncryptionKey: string): Middleware {
  return async function batchLineId(ctx: Ctx, next) {
    const header = ctx.get(BATCH_LINE_HEADER);
    if (header) {
      const line = verify(keyEncryptionKey, header);
      if (line) {
        ctx.state.requestId = lineRequestId(line.batchId, line.index);
        ctx.set(TRACE_HEADER, ctx.state.requestId);
        ctx.state.batchLine = { batchId: line.batchId, index: line.index, keyId: line.keyId };
      }
    }
    return next();
  };
}
