import type { Wallet } from './wallet';
import type { KeyService } from './keys';
import type { AccountService } from './accounts';
import type { AuthLookup } from './auth-lookup';
import type { PeopleService } from './people';

/** Accounts, their keys, balances and people, as the gateway and the console call them. */
export interface AccountsDeps {
  wallet: Wallet;
  keys: KeyService;
  accounts: AccountService;
  /** Users and enterprise membership. */
  people: PeopleService;
  /** A key's account, balance and limits, cached for the request path. */
  authLookup: AuthLookup;
}
