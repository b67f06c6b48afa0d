import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { GatewayError, errors } from '../../domain/errors';
import { taskQueueFor } from '../../domain/task-queues';
import { DEFAULT_KB_ID, type KbReaders } from '../../domain/knowledge/page';
import type { Catalogue } from '../../domain/catalogue';
import { isDuplicateKey } from '../../platform/mongo';
import type { AccountModels } from '../accounts/store';
import type { KnowledgeModels, KbDoc } from './store';
import type { AccountService } from '../accounts/accounts';
import type { PageStore } from './page-store';
import type { KnowledgeScope } from './scope';
import { upsertRacing } from '../../platform/upsert';

/**
 * Knowledge bases of an account: the personal base `default` every account
 * has, and the team bases of an enterprise account (name, readers `all` or
 * listed member user ids, compiler `rules` or `llm` with its chat model).
 * Team base ids are unique across the platform (claimed by a unique insert),
 * so one `kb_id` names one base in any reader's scope.
 */
export const KB_ID_SHAPE = /^[a-z0-9][a-z0-9_-]{1,63}$/;

export interface BaseSettings {
  name?: string;
  readers?: KbReaders;
  compiler?: 'rules' | 'llm';
  compiler_model?: string | null;
}

export interface BaseView {
  id: string;
  object: 'kb';
  account_id: string;
  name: string;
  kind: 'personal' | 'team';
  readers: KbReaders;
  compiler: 'rules' | 'llm';
  compiler_model: string | null;
  created_at: number;
}

export const notFoundBase = (kbId: string) => errors.notFound(`no knowledge base '${kbId}' on this account`);

export function baseView(doc: KbDoc): BaseView {
  return {
    id: doc.kb_id, object: 'kb', account_id: doc.account_id, name: doc.name, kind: doc.kind, readers: doc.readers,
    compiler: doc.compiler, compiler_model: doc.compiler_model, created_at: Math.floor(doc.created_at.getTime() / 1000),
  };
}

export class KbBases {
  constructor(
    private readonly deps: {
      db: AccountModels & KnowledgeModels; accounts: AccountService; pages: PageStore; kbScope: KnowledgeScope; catalogue: () => Catalogue; temporal: Client; taskQueue: string;
    },
  ) {}

  /** A team base of an enterprise account. */
  async create(accountId: string, input: BaseSettings & { kb_id?: string; name: string }): Promise<KbDoc> {
    const account = await this.deps.accounts.get(accountId);
    if (!account.enterprise) throw errors.invalidRequest('team knowledge bases belong to enterprise accounts; this account has only its personal base `default`');
    const kbId = input.kb_id ?? `kb_${randomBytes(8).toString('hex')}`;
    if (!KB_ID_SHAPE.test(kbId)) throw errors.invalidRequest('kb_id: 2-64 characters: lowercase letters, digits, `_` and `-`, starting with a letter or digit', 'kb_id');
    if (kbId === DEFAULT_KB_ID) throw errors.invalidRequest('kb_id: `default` is the personal base of every account', 'kb_id');
    const readers = await this.checkReaders(accountId, input.readers ?? 'all');
    const { compiler, compiler_model } = this.checkCompiler(input.compiler ?? 'rules', input.compiler_model ?? null);
    try {
      await this.deps.db.KbIdClaim.create({ _id: kbId, account_id: accountId, created_at: new Date() });
    } catch (err) {
      if (isDuplicateKey(err)) throw new GatewayError('invalid_request', `kb_id '${kbId}' is taken (team base ids are unique across the platform)`, { status: 409, param: 'kb_id' });
      throw err;
    }
    const doc: KbDoc = {
      _id: `${accountId}/${kbId}`, account_id: accountId, kb_id: kbId, name: input.name, kind: 'team', readers,
      compiler, compiler_model, deleted_at: null, created_at: new Date(),
    };
    await this.deps.db.Kb.create(doc);
    await this.deps.kbScope.changed();
    return doc;
  }

  /** The personal base and every live team base of the account. */
  async list(accountId: string): Promise<KbDoc[]> {
    await this.deps.accounts.get(accountId);
    const personal = (await this.deps.pages.base({ account_id: accountId, kb_id: DEFAULT_KB_ID }))!;
    const teams = await this.deps.db.Kb.find({ account_id: accountId, kind: 'team', deleted_at: null }).sort({ created_at: 1 }).lean<KbDoc[]>();
    return [personal, ...teams];
  }

  /** The base, or 404 (another account's base id is a 404 too). */
  async get(accountId: string, kbId: string): Promise<KbDoc> {
    await this.deps.accounts.get(accountId);
    const doc = await this.deps.pages.base({ account_id: accountId, kb_id: kbId });
    if (!doc) throw notFoundBase(kbId);
    return doc;
  }

  /** Name, readers and compiler; the personal base takes only the compiler. */
  async update(accountId: string, kbId: string, patch: BaseSettings): Promise<KbDoc> {
    const doc = await this.get(accountId, kbId);
    const set: Partial<KbDoc> = {};
    if (doc.kind === 'personal' && (patch.readers !== undefined || patch.name !== undefined)) {
      throw errors.invalidRequest('the personal base `default` has no name or readers to change; only its compiler');
    }
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.readers !== undefined) set.readers = await this.checkReaders(accountId, patch.readers);
    if (patch.compiler !== undefined || patch.compiler_model !== undefined) {
      const compiler = patch.compiler ?? doc.compiler;
      const model = patch.compiler_model !== undefined ? patch.compiler_model : compiler === 'llm' ? doc.compiler_model : null;
      Object.assign(set, this.checkCompiler(compiler, model));
    }
    // The personal base has no record until it is first changed.
    await upsertRacing(() => this.deps.db.Kb.updateOne({ _id: doc._id }, { $set: set, $setOnInsert: { account_id: accountId, kb_id: kbId, kind: doc.kind, created_at: doc.created_at, deleted_at: null, ...(doc.kind === 'personal' ? { name: doc.name, readers: 'all' } : {}) } }, { upsert: true }));
    if (set.readers !== undefined) await this.deps.kbScope.changed();
    return this.get(accountId, kbId);
  }

  /**
   * A team base goes away (readers get 404 at once; its id stays claimed),
   * then a workflow removes its documents, pages and files
   * (`kbSweepWorkflow`, capabilities/knowledge/publish.ts `sweepDeletedBase`). Deleting it
   * again is a 404 that makes sure the sweep was started.
   */
  async remove(accountId: string, kbId: string): Promise<void> {
    await this.deps.accounts.get(accountId);
    const stored = await this.deps.db.Kb.findById(`${accountId}/${kbId}`).lean<KbDoc>();
    if (stored?.deleted_at) {
      await this.startSweep(accountId, kbId);
      throw notFoundBase(kbId);
    }
    const doc = await this.get(accountId, kbId);
    if (doc.kind === 'personal') throw errors.invalidRequest('the personal base `default` cannot be deleted; delete its documents instead');
    await this.deps.db.Kb.updateOne({ _id: doc._id }, { $set: { deleted_at: new Date() } });
    await this.deps.pages.bumpVersion({ account_id: accountId, kb_id: kbId });
    await this.deps.kbScope.changed();
    await this.startSweep(accountId, kbId);
  }

  /** One sweep per base ever (its id is never reused): starting it twice is a no-op. */
  private async startSweep(accountId: string, kbId: string): Promise<void> {
    try {
      await this.deps.temporal.workflow.start('kbSweepWorkflow', {
        taskQueue: taskQueueFor(this.deps.taskQueue, 'kbSweepWorkflow'), workflowId: `kb-sweep:${accountId}/${kbId}`, args: [{ accountId, kbId }],
        priority: { fairnessKey: accountId },
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  private async checkReaders(accountId: string, readers: KbReaders): Promise<KbReaders> {
    if (readers === 'all') return 'all';
    const ids = [...new Set(readers)];
    const members = await this.deps.db.Membership.find({ enterprise_id: accountId, user_id: { $in: ids } }).select({ user_id: 1 }).lean();
    const known = new Set(members.map((m) => m.user_id));
    const strangers = ids.filter((id) => !known.has(id));
    if (strangers.length) throw errors.invalidRequest(`readers: not members of this enterprise: ${strangers.slice(0, 5).join(', ')}`, 'readers');
    return ids;
  }

  private checkCompiler(compiler: 'rules' | 'llm', model: string | null): { compiler: 'rules' | 'llm'; compiler_model: string | null } {
    if (compiler === 'rules') {
      if (model) throw errors.invalidRequest('compiler_model: only the `llm` compiler uses a model', 'compiler_model');
      return { compiler, compiler_model: null };
    }
    if (!model) throw errors.invalidRequest('compiler_model: the `llm` compiler needs a chat model of the catalogue', 'compiler_model');
    const m = this.deps.catalogue().resolve(model);
    if (!m || this.deps.catalogue().channels(m, 'chat-completions').length === 0) {
      throw errors.invalidRequest(`compiler_model: '${model}' is not a chat model of the catalogue`, 'compiler_model');
    }
    return { compiler, compiler_model: m.id };
  }
}
