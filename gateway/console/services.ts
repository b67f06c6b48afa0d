import type { ServiceDeps } from '../deps';
import { AccountAccess } from '../../capabilities/accounts/account-access';
import { AuditLog } from '../../capabilities/accounts/audit';
import { BillingService } from '../../capabilities/billing/billing';
import { SignInService } from '../../capabilities/accounts/sign-in';
import { UsageQuery } from '../../capabilities/usage/usage-query';
import { CallLog } from '../../capabilities/calllog/service';
import { selectPayments, type Payments } from '../../capabilities/billing/select';
import { publicBaseUrl } from '../../platform/config';
import { SessionStore } from './session';

/** What the console's pages call: the gateway's own services plus the console-facing ones, built once. */
export interface ConsoleServices {
  deps: ServiceDeps;
  sessions: SessionStore;
  signIn: SignInService;
  access: AccountAccess;
  audit: AuditLog;
  usageQuery: UsageQuery;
  /** One call by its request id or task id (the console's lookup). */
  callLog: CallLog;
  billing: BillingService;
  /** The payment processor (Stripe, or the development stand-in) and the webhook secret. */
  payments: Payments;
}

const built = new WeakMap<ServiceDeps, ConsoleServices>();

export function consoleServices(deps: ServiceDeps): ConsoleServices {
  let s = built.get(deps);
  if (!s) {
    const payments = selectPayments(deps.config, deps.db);
    s = {
      deps,
      sessions: new SessionStore(deps.redis),
      signIn: new SignInService(deps.redis, deps.people, deps.config.ADMIN_TOKEN),
      access: new AccountAccess(deps.db, deps.people),
      audit: new AuditLog(deps.db),
      usageQuery: new UsageQuery(deps.db, deps.usage),
      callLog: new CallLog(deps),
      billing: new BillingService(payments.processor, deps.accounts, deps.wallet, deps.redis, deps.db, publicBaseUrl(deps.config)),
      payments,
    };
    built.set(deps, s);
  }
  return s;
}
