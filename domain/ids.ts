import { randomBytes } from 'node:crypto';

/** Random ids with a readable kind prefix. */
export function newId(kind: 'acct' | 'key' | 'req' | 'task' | 'avatar' | 'voice' | 'evt' | 'user' | 'doc' | 'build' | 'agent' | 'audit' | 'cs'): string {
  return `${kind}_${randomBytes(12).toString('hex')}`;
}
