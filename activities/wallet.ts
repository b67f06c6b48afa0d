import { ApplicationFailure } from '@temporalio/activity';
import { isDuplicateKey } from '../platform/mongo';
import type { Db } from '../capabilities/store';
import type { Wallet } from '../capabilities/accounts/wallet';
import { countWalletAudit } from '../platform/metrics/index';

export interface WalletActivityDeps {
  db: Db;
  wallet: Wallet;
}

export interface AuditResult {
  auditId: string;
  ledgerBalanceNano: number;
  projectedBalanceNano: number;
  driftNano: number;
  repaired: boolean;
}

/**
 * Compare the Redis projection with the ledger (the truth) and record the
 * audit in Mongo under its business id; optionally rebuild the projection.
 */
export function createWalletActivities(deps: WalletActivityDeps) {
  return {
    async auditWallet(input: { auditId: string; accountId: string; repair: boolean }): Promise<AuditResult> {
      const existing = await deps.db.WalletAudit.findById(input.auditId).lean();
      if (existing) {
        return {
          auditId: existing._id, ledgerBalanceNano: existing.ledger_balance_nano, projectedBalanceNano: existing.projected_balance_nano,
          driftNano: existing.drift_nano, repaired: existing.repaired,
        };
      }
      // An account id that names nothing is an operator's typo, not a clean wallet: say so, and do not retry.
      if (!(await deps.db.Account.exists({ _id: input.accountId }))) {
        throw ApplicationFailure.nonRetryable(`no such account: ${input.accountId}`, 'NoSuchAccount');
      }
      const totals = await deps.wallet.ledgerTotals(input.accountId);
      const projected = await deps.wallet.balance(input.accountId);
      const drift = projected - totals.balanceNano;
      const repaired = input.repair && drift !== 0;
      if (repaired) await deps.wallet.rebuild(input.accountId, [...totals.keySpend.keys()]);
      countWalletAudit(drift, repaired);
      try {
        await deps.db.WalletAudit.create({
          _id: input.auditId, account_id: input.accountId, ledger_balance_nano: totals.balanceNano,
          projected_balance_nano: projected, drift_nano: drift, repaired, entries: totals.rows, created_at: new Date(),
        });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      return { auditId: input.auditId, ledgerBalanceNano: totals.balanceNano, projectedBalanceNano: projected, driftNano: drift, repaired };
    },
  };
}
