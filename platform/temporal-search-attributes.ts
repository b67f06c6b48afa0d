import { SearchAttributeType } from '@temporalio/common';
import type { Logger } from './logger';
import { SEARCH_ATTRIBUTE_KEYS } from '../domain/media/search-attributes';

/** temporal.api.enums.v1.IndexedValueType, by the SDK's SearchAttributeType. */
const INDEXED_VALUE_TYPE: Record<string, number> = {
  [SearchAttributeType.TEXT]: 1,
  [SearchAttributeType.KEYWORD]: 2,
  [SearchAttributeType.INT]: 3,
  [SearchAttributeType.DOUBLE]: 4,
  [SearchAttributeType.BOOL]: 5,
  [SearchAttributeType.DATETIME]: 6,
  [SearchAttributeType.KEYWORD_LIST]: 7,
};

/** The type as `temporal operator search-attribute create --type` spells it. */
const CLI_TYPE: Record<string, string> = {
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.BOOL]: 'Bool',
  [SearchAttributeType.DATETIME]: 'Datetime',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
};

/** The two calls of the operator service this needs (a Connection's or a NativeConnection's `operatorService`). */
export interface SearchAttributeOperator {
  listSearchAttributes(req: { namespace: string }): Promise<{ customAttributes?: Record<string, unknown> | null; systemAttributes?: Record<string, unknown> | null }>;
  addSearchAttributes(req: { namespace: string; searchAttributes: Record<string, number> }): Promise<unknown>;
}

export type SearchAttributesOutcome = { added: string[]; missing: string[] };

/**
 * Registers the search attributes the workflows are started with (TaskId, AccountId, Model) in the namespace,
 * when missing: a fresh namespace refuses every workflow start that carries one it does not know, which was every
 * media task and knowledge build. Lists first and adds only what is missing, so it is idempotent and cheap at every
 * worker start (two workers racing both add; the server answers the second "already exists", and the list is read
 * again). When the server refuses (Temporal Cloud registers them through its own console or `tcld`, and a
 * namespace's permissions may forbid it), it logs one warning naming what to register and returns: the worker
 * serves anyway, and starts of those workflows fail until an operator registers them.
 */
export async function ensureSearchAttributes(
  operator: SearchAttributeOperator,
  namespace: string,
  log: Pick<Logger, 'info' | 'warn'>,
  keys: readonly { name: string; type: SearchAttributeType }[] = SEARCH_ATTRIBUTE_KEYS,
): Promise<SearchAttributesOutcome> {
  const wanted = (): Promise<string[]> =>
    operator.listSearchAttributes({ namespace }).then((listed) => {
      const have = new Set([...Object.keys(listed.customAttributes ?? {}), ...Object.keys(listed.systemAttributes ?? {})]);
      return keys.filter((k) => !have.has(k.name)).map((k) => k.name);
    });
  const byName = new Map(keys.map((k) => [k.name, k]));
  const howTo = (names: string[]) =>
    names.map((n) => `temporal operator search-attribute create --namespace ${namespace} --name ${n} --type ${CLI_TYPE[byName.get(n)!.type]}`).join('; ');
  let missing: string[];
  try {
    missing = await wanted();
  } catch (err) {
    const names = keys.map((k) => k.name);
    log.warn(`Temporal search attributes not checked (${reason(err)}): make sure namespace ${namespace} has ${names.map((n) => `${n} (${CLI_TYPE[byName.get(n)!.type]})`).join(', ')}, or every media task and knowledge build start fails`, { namespace, searchAttributes: names });
    return { added: [], missing: names };
  }
  if (missing.length === 0) return { added: [], missing: [] };
  try {
    await operator.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((n) => [n, INDEXED_VALUE_TYPE[byName.get(n)!.type]])) });
  } catch (err) {
    // Another worker registered them between our list and our add: read the list again below.
    if (!/already exist/i.test(reason(err))) {
      log.warn(`Temporal search attributes missing and not registered (${reason(err)}): register ${missing.join(', ')} in namespace ${namespace} (${howTo(missing)}; on Temporal Cloud through its UI or tcld), or every media task and knowledge build start fails`, { namespace, searchAttributes: missing });
      return { added: [], missing };
    }
  }
  const still = await wanted().catch(() => missing);
  if (still.length > 0) {
    log.warn(`Temporal search attributes still missing after registering them: ${still.join(', ')} in namespace ${namespace} (${howTo(still)})`, { namespace, searchAttributes: still });
    return { added: missing.filter((n) => !still.includes(n)), missing: still };
  }
  log.info('Temporal search attributes registered', { namespace, searchAttributes: missing });
  return { added: missing, missing: [] };
}

function reason(err: unknown): string {
  const e = err as { details?: string; message?: string };
  return String(e?.details || e?.message || err);
}
