import type { KeyRecord } from '../../domain/api-key';

/**
 * What this process's calls in flight may still charge a key that has a limit of its own: a spend cap,
 * or an escrow it is charged to (an agent key's). Spec 1 section 3 lets concurrent calls push a *wallet*
 * past zero, since settlement does not check it, and the gateway keeps that rule for wallets. A cap is
 * the limit its owner set to bound what a key can cost (spec 3: employee-requested agent keys must carry
 * one; their callers may be anonymous), so here each admitted call's pre-charge estimate is held until
 * its charge is written, and the next call's pre-charge counts what the calls before it may still cost:
 * 20 parallel calls on a capped key no longer cost 20 times what one may.
 *
 * In process: no Redis round trip on the path, nothing left behind by a process that dies (its holds die
 * with it). Calls on other replicas are not seen until they settle, so with N replicas a cap can still be
 * passed by what N calls in flight cost; and an estimate is the worst case (max_tokens, or the model's
 * default), so near its cap a key's calls in parallel may get 402 where one after another would pass,
 * as a single call does under the spec's pre-charge rule (send a smaller max_tokens to pass).
 */
export class CapHolds {
  private readonly held = new Map<string, number>();

  /** Whether calls of this key are held against its own limit (a key without either charges its wallet as the spec says). */
  static applies(key: Pick<KeyRecord, 'spend_cap_nano' | 'wallet_id'>): boolean {
    return key.spend_cap_nano !== null || !!key.wallet_id;
  }

  /** What the key's calls in flight in this process may still charge, in nano. */
  of(keyId: string): number {
    return this.held.get(keyId) ?? 0;
  }

  /** Hold `nano` for a call of this key; the returned function gives it back (once). */
  take(keyId: string, nano: number): () => void {
    this.held.set(keyId, this.of(keyId) + nano);
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      const left = this.of(keyId) - nano;
      if (left > 0) this.held.set(keyId, left);
      else this.held.delete(keyId);
    };
  }

  /** Keys with calls in flight (tests). */
  get size(): number {
    return this.held.size;
  }
}

/** The process's holds: one process, one view of its calls in flight. */
export const capHolds = new CapHolds();
