import { z } from 'zod';
import { AccountPatch, IdPaging, LegacyKey, NewAccount, NewKey, Paging, KeyPatch, TopUp, Credit } from '../../routes/admin';
import { Member, NewUser, UserPatch } from '../../routes/admin-people';
import { BasePatch, JsonDocument, NewBase } from '../../routes/admin-kb';
import { AgentPatch, Approve, AuditQuery, KeyIssue, KeyList, KeyRequest, NewAgent, Reject, SettingsPatch, UsageQuery } from '../../routes/admin-agents';
import { Params as ChannelParams, TestBody as ChannelTestBody } from '../../routes/admin-channels';
import { ChannelPatch, NewChannel } from '../../../domain/channels';
import type { Operation } from '../registry';

/** The management API (`/admin/v1`, operator token). Errors in the OpenAI shape. */

const A = '/admin/v1';
const ACTING_USER = { name: 'X-Acting-User', description: 'A user id: the call is made with that member\'s role (owner, admin or member) instead of as the operator', schema: { type: 'string' } };

function admin(method: Operation['method'], path: string, operationId: string, summary: string, opts: Partial<Operation> = {}): Operation {
  const ids = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  return {
    method, path: `${A}${path}`, operationId, summary, tag: opts.tag ?? 'Management', auth: 'admin', errors: 'management',
    errorStatuses: [400, 401, 404, ...(method === 'get' || method === 'delete' ? [] : [409, 413])],
    ...(ids.length ? { params: z.object(Object.fromEntries(ids.map((id) => [id, z.string().min(1)]))) } : {}),
    responses: { [method === 'post' && opts.body ? 201 : 200]: { description: 'OK' } },
    ...opts,
  };
}
const body = (schema: z.ZodType, example?: unknown) => ({ body: { schema, example } });
const agentOpts = (o: Partial<Operation> = {}): Partial<Operation> => ({ tag: 'Agents', headers: [ACTING_USER], ...o });

export const adminOperations: Operation[] = [
  admin('post', '/accounts', 'createAccount', 'Create an account (with the signup grant)', body(NewAccount, { name: 'acme' })),
  admin('get', '/accounts/{id}', 'getAccount', 'An account'),
  admin('patch', '/accounts/{id}', 'updateAccount', 'Status and rate limits', body(AccountPatch, { rate_limit: { rpm: 600 } })),
  admin('post', '/accounts/{id}/topups', 'topUp', 'Top up (at least 134.8; `reference` or Idempotency-Key make it idempotent: the same again is a replay, another amount 409; `topup_…` references are the checkout\'s own and refused)', body(TopUp, { amount_usd: '200', reference: 'inv-1' })),
  admin('post', '/accounts/{id}/credits', 'credit', 'Credit any positive amount once per `reference` (a won dispute, goodwill; ledger kind adjust); the same again is a replay, another amount 409', body(Credit, { amount_usd: '49.50', reference: 'dispute-won-dp_1' })),
  admin('get', '/accounts', 'listAccounts', 'Every account in id order, paged (`after` = the previous page\'s `next_cursor`)', { query: IdPaging }),
  admin('get', '/users', 'listUsers', 'Every user in id order, paged (`after` = the previous page\'s `next_cursor`)', { tag: 'People', query: IdPaging }),
  admin('get', '/accounts/{id}/ledger', 'getLedger', 'Ledger entries, newest first', { query: Paging }),
  admin('get', '/accounts/{id}/keys', 'listKeys', 'The account\'s keys'),
  admin('post', '/accounts/{id}/keys', 'createKey', 'Issue a key (the plaintext is in the answer)', body(NewKey, { name: 'ci' })),
  admin('post', '/accounts/{id}/keys/import-legacy', 'importLegacyKey', 'Import an early key as hash-only', body(LegacyKey)),
  admin('get', '/keys/{id}', 'getKey', 'A key with used_usd'),
  admin('get', '/keys/{id}/reveal', 'revealKey', 'The key\'s plaintext (409 for legacy keys; every reveal is logged)', { errorStatuses: [401, 404, 409] }),
  admin('patch', '/keys/{id}', 'updateKey', 'Change a key (`enabled: false` revokes)', { ...body(KeyPatch, { enabled: false }), responses: { 200: { description: 'The key' } } }),
  admin('delete', '/keys/{id}', 'deleteKey', 'Delete a key'),
  admin('get', '/keys/{id}/calls', 'keyCalls', 'The key\'s call history', { query: Paging }),

  admin('post', '/users', 'createUser', 'Create a user and its personal account', { tag: 'People', ...body(NewUser, { email: 'ada@example.com', name: 'Ada' }) }),
  admin('get', '/users/{id}', 'getUser', 'A user', { tag: 'People' }),
  admin('patch', '/users/{id}', 'updateUser', 'Password or disabled', { tag: 'People', ...body(UserPatch), responses: { 200: { description: 'The user' } } }),
  admin('get', '/accounts/{id}/members', 'listMembers', 'Enterprise members', { tag: 'People' }),
  admin('put', '/accounts/{id}/members', 'putMember', 'Add a member or change its role', { tag: 'People', ...body(Member, { user_id: 'user_x', role: 'member' }) }),
  admin('delete', '/accounts/{id}/members/{user}', 'removeMember', 'Remove a member', { tag: 'People' }),

  admin('post', '/accounts/{id}/kbs', 'createBase', 'Create a knowledge base', { tag: 'Knowledge bases', ...body(NewBase, { name: 'Handbook' }) }),
  admin('get', '/accounts/{id}/kbs', 'listBases', 'Knowledge bases of the account', { tag: 'Knowledge bases' }),
  admin('get', '/accounts/{id}/kbs/{kb}', 'getBase', 'A knowledge base', { tag: 'Knowledge bases' }),
  admin('patch', '/accounts/{id}/kbs/{kb}', 'updateBase', 'Rename, readers, compiler', { tag: 'Knowledge bases', ...body(BasePatch), responses: { 200: { description: 'The base' } } }),
  admin('delete', '/accounts/{id}/kbs/{kb}', 'deleteBase', 'Delete a knowledge base', { tag: 'Knowledge bases' }),
  admin('post', '/accounts/{id}/kbs/{kb}/documents', 'uploadDocument', 'Upload a document (MD, TXT, HTML, PDF, DOCX); one build workflow each', {
    tag: 'Knowledge bases', body: { schema: JsonDocument, example: { filename: 'a.md', content: '# Title\n\nText' } },
    description: 'JSON (`content` as text, or base64 with `base64: true`) or multipart/form-data with a `file` field.',
    responses: { 200: { description: 'Same content as an earlier upload (duplicate: true)' }, 202: { description: 'The build, started' } },
  }),
  admin('get', '/accounts/{id}/kbs/{kb}/documents', 'listDocuments', 'Documents of a base', { tag: 'Knowledge bases' }),
  admin('delete', '/accounts/{id}/kbs/{kb}/documents/{doc}', 'deleteDocument', 'Delete a document and its pages', { tag: 'Knowledge bases' }),
  admin('get', '/accounts/{id}/kbs/{kb}/builds/{build}', 'getBuild', 'A build', { tag: 'Knowledge bases' }),

  admin('get', '/accounts/{id}/agent-settings', 'getAgentSettings', 'Enterprise agent settings', agentOpts()),
  admin('put', '/accounts/{id}/agent-settings', 'putAgentSettings', 'Model whitelist, default model, key billing', agentOpts({ ...body(SettingsPatch), responses: { 200: { description: 'The settings' } } })),
  admin('post', '/accounts/{id}/agents', 'createAgent', 'Create an agent', agentOpts(body(NewAgent, { name: 'Helper', system_prompt: 'You help.' }))),
  admin('get', '/accounts/{id}/agents', 'listAgents', 'Agents of an enterprise', agentOpts()),
  admin('get', '/agents/{id}', 'getAgent', 'An agent', agentOpts()),
  admin('patch', '/agents/{id}', 'updateAgent', 'Change an agent', agentOpts({ ...body(AgentPatch), responses: { 200: { description: 'The agent' } } })),
  admin('post', '/agents/{id}/publish', 'publishAgent', 'Publish', agentOpts({ responses: { 200: { description: 'The agent' } } })),
  admin('post', '/agents/{id}/unpublish', 'unpublishAgent', 'Unpublish', agentOpts({ responses: { 200: { description: 'The agent' } } })),
  admin('delete', '/agents/{id}', 'deleteAgent', 'Delete an agent', agentOpts()),
  admin('put', '/agents/{id}/knowledge-bases/{kb}', 'attachBase', 'Attach a knowledge base', agentOpts()),
  admin('delete', '/agents/{id}/knowledge-bases/{kb}', 'detachBase', 'Detach a knowledge base', agentOpts()),
  admin('get', '/agents/{id}/usage', 'agentUsage', 'Usage of an agent by day', agentOpts({ query: UsageQuery })),
  admin('post', '/agents/{id}/key-requests', 'requestAgentKey', 'A member requests an agent key', agentOpts(body(KeyRequest, { name: 'bot' }))),
  admin('post', '/agents/{id}/keys', 'issueAgentKey', 'Issue an agent key directly', agentOpts(body(KeyIssue, { name: 'bot', spend_cap_usd: '10' }))),
  admin('get', '/accounts/{id}/agent-keys', 'listAgentKeys', 'Agent keys of an enterprise', agentOpts({ query: KeyList })),
  admin('get', '/users/{id}/agent-keys', 'userAgentKeys', 'A user\'s agent keys', agentOpts()),
  admin('get', '/agent-keys/{id}', 'getAgentKey', 'An agent key', agentOpts()),
  admin('get', '/agent-keys/{id}/plaintext', 'agentKeyPlaintext', 'An agent key\'s plaintext (audited)', agentOpts()),
  admin('post', '/agent-keys/{id}/approve', 'approveAgentKey', 'Approve a request with a spend cap', agentOpts({ ...body(Approve, { spend_cap_usd: '10' }), responses: { 200: { description: 'The key' } } })),
  admin('post', '/agent-keys/{id}/reject', 'rejectAgentKey', 'Reject a request', agentOpts({ ...body(Reject), responses: { 200: { description: 'The key' } } })),
  admin('post', '/agent-keys/{id}/revoke', 'revokeAgentKey', 'Revoke an agent key', agentOpts({ responses: { 200: { description: 'The key' } } })),
  admin('delete', '/agent-keys/{id}', 'deleteAgentKey', 'Delete an agent key', agentOpts()),
  admin('get', '/accounts/{id}/agent-keys/audit', 'agentKeyAudit', 'The audit record of agent keys', agentOpts({ query: AuditQuery })),

  admin('get', '/channels', 'listChannels', 'Every channel (catalogue file and API), with its breaker state; never a secret', { tag: 'Channels' }),
  admin('post', '/channels', 'createChannel', 'Add a channel (a secret credential is sealed before it is stored)', {
    tag: 'Channels', ...body(NewChannel, { id: 'openai-backup', vendor: 'openai', adapter: 'chat-completions', base_url: 'https://api.openai.com/v1', credentials: { env: 'OPENAI_API_KEY' }, models: ['gpt-4o-mini'] }),
  }),
  admin('get', '/channels/{id}', 'getChannel', 'A channel, with the breaker state each gateway and worker last reported', { tag: 'Channels', params: ChannelParams }),
  admin('patch', '/channels/{id}', 'updateChannel', 'Change a channel (`models` replaces the list)', { tag: 'Channels', params: ChannelParams, ...body(ChannelPatch, { enabled: false }), responses: { 200: { description: 'The channel' } } }),
  admin('delete', '/channels/{id}', 'deleteChannel', 'Remove a channel', { tag: 'Channels', params: ChannelParams }),
  admin('post', '/channels/{id}/test', 'testChannel', 'One free test call through the channel (a model it serves; the first one if absent)', {
    tag: 'Channels', params: ChannelParams, body: { schema: ChannelTestBody, example: { model: 'gpt-4o-mini' }, required: false },
    responses: { 200: { description: 'The outcome: ok, status, latency, the upstream error if any' } },
  }),

  admin('post', '/accounts/{account}/webhook-secret', 'createWebhookSecret', 'Create the account\'s webhook signing secret (shown once; 409 if it has one)', {
    tag: 'Webhooks', responses: { 201: { description: 'The secret, shown once' } },
  }),
  admin('post', '/accounts/{account}/webhook-secret/rotate', 'rotateWebhookSecret', 'A new signing secret; the old one keeps signing too for 24 hours', { tag: 'Webhooks' }),
  admin('get', '/accounts/{account}/webhook-secret', 'getWebhookSecret', 'The secret\'s metadata (the plaintext only if it was never shown)', { tag: 'Webhooks' }),
];
