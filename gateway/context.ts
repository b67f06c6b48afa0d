import type { ParameterizedContext, Next } from 'koa';
import type { AuthState } from '../domain/api-key';
import type { CallAttempt } from '../domain/call-attempts';
import type { RateDecision } from '../capabilities/accounts/auth-lookup';
import type { IdempotencyHandle } from './middleware/idempotency';
import type { HeldLease } from './middleware/rate-limit';
import type { AuthConfirmation } from './middleware/auth';
import type { ChatCharge } from '../domain/pricing';

export type { AuthState };

export type ErrorShape = 'openai' | 'messages' | 'generate-content';


export interface GatewayState {
  requestId: string;
  startedAt: number;
  auth?: AuthState;
  /** The account a billing call acts for when a console session (not a key) made it (gateway/routes/payments.ts). */
  billingAccount?: { id: string; by: string };
  /** SHA-256 of the key the call presented (capabilities/accounts/auth-lookup.ts keys its guesses by it). */
  keyHash?: string;
  /**
   * Set on an optimistic call (gateway/middleware/auth.ts): settles once the key's fresh state admits the
   * call (rejects with the refusal otherwise). Await it before anything reaches the client or the wallet.
   */
  authConfirmed?: Promise<AuthConfirmation>;
  /** The account limiter's verdict, taken during authentication. */
  rate?: RateDecision;
  /** The concurrency slot this request holds, when the account has a concurrency limit. */
  lease?: HeldLease;
  /** Set by routes that produce a usage row, so a refusal can be logged with the model. */
  usageEndpoint?: string;
  model?: string;
  /** The model id as the client sent it (an alias, say), for a model-access check made again. */
  requestedModel?: string;
  /** Extra columns of this request's usage row (agent calls: the agent and the injected page ids). */
  usageTags?: { agent_id?: string | null; kb_page_ids?: string[] };
  /** The charge being written in the background (settleDurably): resolves once it is applied or given up. */
  settlement?: Promise<void>;
  /** True once the handler wrote its own terminal usage row. */
  usageRecorded?: boolean;
  /** Parsed JSON body and its raw bytes. */
  body?: unknown;
  rawBody?: Buffer;
  /** Bytes of each top-level member's value in the raw body (routes that ask jsonBody to measure). */
  bodyMemberBytes?: Map<string, number>;
  /**
   * Avatar and digital-human endpoints report 401 authentication_error, 403 model_not_allowed,
   * 404 model_not_found and 400 invalid_request_error (spec 2 section 7.4).
   */
  errorDialect?: 'digital-human';
  /** An async submission's checked `callback_url` (gateway/middleware/webhook-submission.ts). */
  callbackUrl?: string;
  /** The upstream attempts of this call, for its usage row and the call log (domain/call-attempts.ts). */
  attempts?: CallAttempt[];
  /** Who reads the call log (gateway/routes/calllog.ts). */
  logReader?: { kind: 'account'; accountId: string } | { kind: 'operator' };
  /** Present on charging POSTs sent with an Idempotency-Key. */
  idempotency?: IdempotencyHandle;
  /** Gives back what this call holds against its key's cap or escrow (gateway/chat/cap-holds.ts), once its charge is written. */
  capRelease?: () => void;
  /** The chat charge settled for this call (gateway/chat/settle.ts), for the cost fields of its answer. */
  charge?: ChatCharge;
  /** A line of a batch (capabilities/batches/line-auth.ts): its charge takes the batch multiplier, its op id is the line's. */
  batchLine?: { batchId: string; index: number; keyId: string };
}

export type Ctx = ParameterizedContext<GatewayState>;
export type Middleware = (ctx: Ctx, next: Next) => Promise<unknown>;
