import { errors } from '../../domain/errors';
import type { Wallet } from '../accounts/wallet';
import type { EscrowFlights } from './escrow-flights';

/** The ledger account of an agent key's escrow. */
export const escrowWalletId = (agentKeyId: string) => `esc_${agentKeyId}`;
/** The agent key an escrow wallet belongs to (null for any other wallet). */
export const agentKeyOfEscrow = (walletId: string): string | null => (walletId.startsWith('esc_') ? walletId.slice(4) : null);

/**
 * Reserved escrow for agent keys (an enterprise may choose it): at issuance
 * the key's cap moves from the enterprise balance to the key's own ledger
 * account, which the key's calls are gated on and charged to; at revocation
 * what is left moves back, once every call in flight on it has settled
 * (`flights`). Each move is two ledger ops with deterministic ids
 * (`{agentKeyId}:escrow-...`), so a retry after a crash repeats nothing: the
 * hold is gated atomically in Redis (never past the enterprise balance), and
 * the matching credit is replayed by whoever resumes the step.
 */
export class Escrow {
  constructor(private readonly wallet: Wallet, readonly flights: EscrowFlights) {}

  /** Hold `capNano` from the enterprise into the escrow; 402 when the enterprise balance is short. */
  async fund(enterpriseId: string, agentKeyId: string, capNano: number): Promise<void> {
    const hold = await this.wallet.apply(
      { opId: `${agentKeyId}:escrow-hold`, accountId: enterpriseId, kind: 'escrow', amountNano: -capNano, ref: agentKeyId },
      { capNano: null },
    );
    if (hold.status === 'refused') throw errors.quota();
    await this.wallet.apply({ opId: `${agentKeyId}:escrow-fund`, accountId: escrowWalletId(agentKeyId), kind: 'escrow', amountNano: capNano, ref: agentKeyId });
  }

  /** What the escrow holds now (charges of calls still in flight may lower it). */
  async balance(agentKeyId: string): Promise<number> {
    return this.wallet.balance(escrowWalletId(agentKeyId));
  }

  /**
   * Move the escrow's rest `amountNano` (measured once, after its last call settled, and fixed by the
   * release claim) back to the enterprise, leaving the escrow at exactly 0. A rest below 0 (concurrent
   * calls overshot the cap: chat charges are not gated) is the enterprise's to pay, like any charge of its keys.
   */
  async release(enterpriseId: string, agentKeyId: string, amountNano: number): Promise<void> {
    if (amountNano === 0) return;
    await this.wallet.apply({ opId: `${agentKeyId}:escrow-release`, accountId: escrowWalletId(agentKeyId), kind: 'escrow', amountNano: -amountNano, ref: agentKeyId });
    await this.wallet.apply({ opId: `${agentKeyId}:escrow-return`, accountId: enterpriseId, kind: 'escrow', amountNano: amountNano, ref: agentKeyId });
  }
}
