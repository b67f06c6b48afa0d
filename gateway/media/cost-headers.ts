import { formatCredits } from '../../domain/money';
import { FINAL_STATES, type TaskDocument } from '../../domain/media/task';
import type { Ctx } from '../context';
import { COST_HEADER } from '../chat/cost-fields';

/** What a media submission holds against the wallet (issue 26): the worst case reserved, in credits. */
export const COST_HELD_HEADER = 'x-gateway-cost-held';

export function setHeldHeader(ctx: Ctx, doc: Pick<TaskDocument, 'reserved_nano'>): void {
  ctx.set(COST_HELD_HEADER, formatCredits(doc.reserved_nano));
}

/** A task's poll: while it runs, the amount held; once final, the charge it settled on (`x-gateway-cost`). */
export function setTaskCostHeaders(ctx: Ctx, doc: Pick<TaskDocument, 'reserved_nano' | 'cost_nano' | 'state'>): void {
  if (FINAL_STATES.has(doc.state as never)) ctx.set(COST_HEADER, formatCredits(doc.cost_nano));
  else setHeldHeader(ctx, doc);
}
