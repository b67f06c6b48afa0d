import type { ServiceDeps } from '../deps';
import type { Ctx } from '../context';
import { runChat } from './pipeline';
import { walletOf } from '../../domain/api-key';
import { agentChatCall } from './agent-prelude';

/**
 * A chat-completions call made with an agent key: the agent's prelude, then
 * the shared chat pipeline and billing. A key billed to a reserved escrow
 * registers the call as in flight on it first (refused once the key is
 * revoked), and leaves once the call's charge is written, so the escrow's
 * rest is released only after every charge on it landed.
 */
export async function serveAgentCall(deps: ServiceDeps, ctx: Ctx): Promise<void> {
  const key = ctx.state.auth!.key;
  // Entering the escrow and the prelude's reads start in the same tick: one Redis round trip for both.
  const entering = deps.agents.keys.beginCall(walletOf(key), ctx.state.requestId);
  const preparing = agentChatCall(deps, ctx);
  let flight: Awaited<typeof entering>;
  try {
    flight = await entering;
  } catch (err) {
    preparing.catch(() => undefined); // refused (revoked): the prelude's outcome does not matter
    throw err;
  }
  try {
    await runChat(deps, ctx, await preparing);
  } finally {
    if (flight) {
      // A charge still being written in the background (a slow Redis) is awaited before leaving.
      const leave = () => flight.leave().catch((err: unknown) => deps.log.warn('escrow flight not left; it lapses at its deadline', { trace: ctx.state.requestId, err }));
      void (ctx.state.settlement ?? Promise.resolve()).then(leave, leave);
    }
  }
}
