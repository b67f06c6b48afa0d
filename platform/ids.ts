import { randomBytes } from 'node:crypto';

/** Random ids with a readable kind prefix (node:crypto, hence infra: domain/ stays free of I/O). */
export function newId(kind: 'acct' | 'key' | 'req' | 'task' | 'avatar' | 'voice' | 'evt' | 'user' | 'doc' | 'build' | 'agent' | 'akey' | 'aud' | 'audit' | 'cs' | 'topup'): string {
  return `${kind}_${randomBytes(12).toString('hex')}`;
}

/** A new API key: `sk-` + the deployment's 8-character service tag + `-` + 64 hex (domain/api-key.ts KEY_PATTERN). */
export function generateApiKey(serviceTag: string): string {
  return `sk-${serviceTag}-${randomBytes(32).toString('hex')}`;
}
