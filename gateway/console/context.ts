import type { ParameterizedContext } from 'koa';
import type { GatewayState } from '../context';
import type { Session } from './session';
import type { ManagedAccount } from '../../capabilities/accounts/account-access';

export interface ConsoleState extends GatewayState {
  session?: Session;
  sessionToken?: string;
  /** Accounts the signed-in principal manages, and the one the pages show. */
  managed?: ManagedAccount[];
  current?: ManagedAccount;
  userEmail?: string;
  /** Parsed urlencoded form fields of a POST. */
  form?: Record<string, string | string[]>;
}

export type CCtx = ParameterizedContext<ConsoleState>;
