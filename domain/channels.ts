import { z } from 'zod';

/**
 * Channels as operators manage them: one upstream endpoint (vendor adapter,
 * base URL, credentials) declared once, serving a list of models. The
 * catalogue file seeds them (`channels[]` of data/catalogue.json), the
 * management API edits them (`/admin/v1/channels`), and the catalogue turns
 * them into each model's per-protocol ladder (`resolveChannels`).
 * Workflow-safe: no I/O here.
 */

/** A slug: lower-case letters, digits, `.`, `_`, `-`; it names the channel in logs, usage rows and tasks. */
export const ChannelId = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'must be 1-64 characters: lower-case letters, digits, ".", "_" or "-", starting with a letter or digit');

/** Client protocols a channel may serve: the four chat protocols, and `task` for media families. */
export const ChannelProtocol = z.enum(['chat-completions', 'messages', 'responses', 'generate-content', 'task']);
export type ChannelProtocol = z.infer<typeof ChannelProtocol>;

/** How a protocol cell is served (spec 1 section 4.10): bytes through, gateway translation, or the upstream converts. */
export const ServeMode = z.enum(['native', 'translated', 'upstream-converted']);
export type ServeMode = z.infer<typeof ServeMode>;

/** Per-protocol capabilities a channel has beyond plain generation (the built-in tools of spec 1 section 4.1). */
export const ChannelCapability = z.enum(['web_search', 'image_generation']);

/** The adapters of providers/: the four chat wire formats and the media vendor APIs. */
export const CHAT_ADAPTERS = ['chat-completions', 'messages', 'responses', 'generate-content'] as const;
export const MEDIA_ADAPTERS = [
  'openai-images', 'image-tasks', 'mj', 'ark-video', 'dh-video', 'dh-avatar', 'dh-transcript', 'suno', 'minimax-t2a', 'minimax-voice-clone',
] as const;
export const ChannelAdapter = z.enum([...CHAT_ADAPTERS, ...MEDIA_ADAPTERS]);
export type ChannelAdapter = z.infer<typeof ChannelAdapter>;
export const isChatAdapter = (a: string): a is (typeof CHAT_ADAPTERS)[number] => (CHAT_ADAPTERS as readonly string[]).includes(a);

/** Vendor labels (who runs the endpoint); informative, the adapter decides the wire format. */
export const ChannelVendor = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, 'must be a lower-case label such as openai, anthropic, google, volcengine-ark, minimax, suno, midjourney');

/** An env variable holding an upstream key: `*_API_KEY` (platform/config.ts reads exactly those, once). */
export const EnvKeyName = z.string().regex(/^[A-Z][A-Z0-9_]*_API_KEY$/, 'must name an environment variable ending in _API_KEY, such as OPENAI_API_KEY');

const ServesMap = z.partialRecord(ChannelProtocol, ServeMode);
const CapabilityMap = z.partialRecord(ChannelProtocol, z.array(ChannelCapability).max(8));

/** One model a channel serves; the upstream may call it by another name. Overrides apply to this model only. */
export const ChannelModelSchema = z
  .object({
    model: z.string().min(1).max(200),
    /** The name the upstream knows the model by; absent: the public id. */
    upstream_model: z.string().min(1).max(200).optional(),
    /** Another adapter of the same vendor for this model (a digital-human vendor's avatar or transcript API). */
    adapter: ChannelAdapter.optional(),
    /** Protocols served for this model, replacing the channel's `protocols`. */
    protocols: ServesMap.optional(),
  })
  .strict();
export type ChannelModel = z.infer<typeof ChannelModelSchema>;

/** A model entry: an id, or the object form with a mapping. */
export const ChannelModelInput = z.union([z.string().min(1).max(200).transform((model): ChannelModel => ({ model })), ChannelModelSchema]);

/** Credentials as written in the catalogue file or sent to the API. The secret form is sealed before it is stored. */
export const CredentialsInput = z.union([
  z.object({ env: EnvKeyName }).strict(),
  z.object({ secret: z.string().min(1).max(4096) }).strict(),
  z.object({ none: z.literal(true) }).strict(),
]);
export type CredentialsInput = z.infer<typeof CredentialsInput>;

/** Fields an operator sets. `protocols` absent: a chat adapter serves its own protocol natively, a media adapter serves `task`. */
export const ChannelFields = {
  vendor: ChannelVendor,
  adapter: ChannelAdapter,
  /** The vendor's origin (plus path prefix); `${VAR}` is replaced from the process's config (SIMULATOR_URL). */
  base_url: z.string().min(1).max(2000).refine((u) => /^https?:\/\//.test(u) || /^\$\{[A-Z0-9_]+\}/.test(u), 'must be an http(s) URL'),
  credentials: CredentialsInput,
  /** Lower is tried first; channels of equal priority share traffic by weight. */
  priority: z.number().int().min(0).max(1000),
  weight: z.number().int().min(1).max(1000),
  protocols: ServesMap,
  capabilities: CapabilityMap,
  models: z.array(ChannelModelInput).max(1000),
  enabled: z.boolean(),
  note: z.string().max(2000),
};

/** A channel as the catalogue file declares it (defaults filled). */
export const ChannelSeedSchema = z
  .object({
    id: ChannelId,
    ...ChannelFields,
    priority: ChannelFields.priority.default(0),
    weight: ChannelFields.weight.default(1),
    protocols: ChannelFields.protocols.optional(),
    capabilities: ChannelFields.capabilities.default({}),
    enabled: ChannelFields.enabled.default(true),
    note: ChannelFields.note.optional(),
    /** A committed file names an env variable (or none); secrets are set through the management API. */
    credentials: z.union([z.object({ env: EnvKeyName }).strict(), z.object({ none: z.literal(true) }).strict()]),
    models: z.array(ChannelModelInput).max(1000).default([]),
  })
  .strict();
export type ChannelSeed = z.infer<typeof ChannelSeedSchema>;

/** Stored credentials: an env variable name, a sealed secret (AES-256-GCM, platform/secrets.ts) with its last 4 characters, or none. */
export type StoredCredentials =
  | { type: 'env'; env: string }
  | { type: 'secret'; sealed: { iv: string; tag: string; data: string }; hint: string }
  | { type: 'none' };

/** A channel as stored and as the catalogue resolves it. */
export interface ChannelRecord {
  id: string;
  vendor: string;
  adapter: ChannelAdapter;
  base_url: string;
  credentials: StoredCredentials;
  priority: number;
  weight: number;
  protocols: Partial<Record<ChannelProtocol, ServeMode>> | null;
  capabilities: Partial<Record<ChannelProtocol, Array<z.infer<typeof ChannelCapability>>>>;
  models: ChannelModel[];
  enabled: boolean;
  note: string | null;
}

/** What a channel serves when it says nothing: its adapter's own protocol (chat) or `task` (media). */
export function defaultProtocols(adapter: ChannelAdapter): Partial<Record<ChannelProtocol, ServeMode>> {
  return isChatAdapter(adapter) ? { [adapter]: 'native' } : { task: 'native' };
}

/**
 * One rung of a model's ladder on one protocol: what the chat pipeline and the
 * media activities need to call the channel. `api_key` is the plaintext key,
 * resolved when the catalogue is loaded (env variable or unsealed secret); it
 * never leaves the process.
 */
export interface ResolvedChannel {
  id: string;
  kind: ServeMode;
  /** The adapter (wire protocol or media vendor API) this rung uses. */
  upstream: string;
  base_url: string;
  api_key_env?: string;
  api_key?: string;
  priority: number;
  weight: number;
  upstream_model?: string;
  web_search: boolean;
  image_generation: boolean;
}

/** Order of a ladder: priority ascending, then weight descending (channel-affinity spreads equal priorities). */
export function ladderOrder<C extends { priority: number; weight: number }>(list: C[]): C[] {
  return [...list].sort((a, b) => a.priority - b.priority || b.weight - a.weight);
}

/**
 * Each model's channels per protocol, from the enabled channels. `modelIdOf`
 * maps a channel's model entry (an id or an alias) to the model's current id;
 * entries it does not know are skipped.
 */
export function resolveChannels(
  channels: readonly ChannelRecord[],
  modelIdOf: (id: string) => string | undefined,
  credentialsOf: (c: ChannelRecord) => { api_key_env?: string; api_key?: string },
  urlOf: (baseUrl: string) => string,
): Map<string, Record<string, ResolvedChannel[]>> {
  const out = new Map<string, Record<string, ResolvedChannel[]>>();
  for (const c of channels) {
    if (!c.enabled) continue;
    const creds = credentialsOf(c);
    const base_url = urlOf(c.base_url);
    for (const entry of c.models) {
      const modelId = modelIdOf(entry.model);
      if (!modelId) continue;
      const adapter = entry.adapter ?? c.adapter;
      const serves = entry.protocols ?? c.protocols ?? defaultProtocols(adapter);
      const byProtocol = out.get(modelId) ?? {};
      out.set(modelId, byProtocol);
      for (const [protocol, kind] of Object.entries(serves) as Array<[ChannelProtocol, ServeMode]>) {
        const caps = c.capabilities[protocol] ?? [];
        (byProtocol[protocol] ??= []).push({
          id: c.id, kind, upstream: adapter, base_url, ...creds, priority: c.priority, weight: c.weight,
          ...(entry.upstream_model ? { upstream_model: entry.upstream_model } : {}),
          web_search: caps.includes('web_search'), image_generation: caps.includes('image_generation'),
        });
      }
    }
  }
  for (const byProtocol of out.values()) for (const p of Object.keys(byProtocol)) byProtocol[p] = ladderOrder(byProtocol[p]);
  return out;
}

/** `POST /admin/v1/channels`. */
export const NewChannel = z
  .object({
    id: ChannelId,
    ...ChannelFields,
    priority: ChannelFields.priority.default(0),
    weight: ChannelFields.weight.default(1),
    protocols: ChannelFields.protocols.nullable().optional(),
    capabilities: ChannelFields.capabilities.default({}),
    enabled: ChannelFields.enabled.default(true),
    note: ChannelFields.note.nullable().optional(),
  })
  .strict();
export type NewChannel = z.output<typeof NewChannel>;

/** `PATCH /admin/v1/channels/{id}`: any field but the id; `models` replaces the list. */
export const ChannelPatch = z
  .object({
    vendor: ChannelFields.vendor.optional(),
    adapter: ChannelFields.adapter.optional(),
    base_url: ChannelFields.base_url.optional(),
    credentials: ChannelFields.credentials.optional(),
    priority: ChannelFields.priority.optional(),
    weight: ChannelFields.weight.optional(),
    protocols: ChannelFields.protocols.nullable().optional(),
    capabilities: ChannelFields.capabilities.optional(),
    models: ChannelFields.models.optional(),
    enabled: ChannelFields.enabled.optional(),
    note: ChannelFields.note.nullable().optional(),
  })
  .strict();
export type ChannelPatch = z.output<typeof ChannelPatch>;

/**
 * What is wrong with a channel beyond its field types: each problem with the
 * field path it concerns. `endpointOf` gives a model's endpoint type (undefined:
 * not in the catalogue); `translates(client, upstream)` says whether the gateway
 * has that translator.
 */
export function channelProblems(
  c: Pick<ChannelRecord, 'adapter' | 'protocols' | 'models'>,
  endpointOf: (model: string) => string | undefined,
  translates: (client: string, upstream: string) => boolean,
): Array<{ param: string; message: string }> {
  const problems: Array<{ param: string; message: string }> = [];
  const seen = new Set<string>();
  const checkServes = (param: string, adapter: ChannelAdapter, serves: Partial<Record<ChannelProtocol, ServeMode>>) => {
    for (const [protocol, mode] of Object.entries(serves) as Array<[ChannelProtocol, ServeMode]>) {
      const at = `${param}.${protocol}`;
      if (!isChatAdapter(adapter)) {
        if (protocol !== 'task') problems.push({ param: at, message: `a ${adapter} channel serves only the 'task' protocol (media)` });
        else if (mode !== 'native') problems.push({ param: at, message: `media channels serve 'task' as 'native'` });
      } else if (protocol === 'task') {
        problems.push({ param: at, message: `a ${adapter} channel serves chat protocols, not 'task'` });
      } else if (mode === 'native' && protocol !== adapter) {
        problems.push({ param: at, message: `'native' means the upstream speaks ${protocol}, but the adapter is ${adapter}: use 'translated' or 'upstream-converted'` });
      } else if (mode === 'translated' && (protocol === adapter || !translates(protocol, adapter))) {
        problems.push({ param: at, message: `the gateway does not translate ${protocol} to ${adapter}` });
      }
    }
  };
  if (c.protocols) checkServes('protocols', c.adapter, c.protocols);
  c.models.forEach((entry, i) => {
    const param = `models[${i}]`;
    const endpoint = endpointOf(entry.model);
    if (endpoint === undefined) problems.push({ param: `${param}.model`, message: `'${entry.model}' is not a model of the catalogue` });
    if (seen.has(entry.model)) problems.push({ param: `${param}.model`, message: `'${entry.model}' is listed twice` });
    seen.add(entry.model);
    const adapter = entry.adapter ?? c.adapter;
    if (entry.adapter && isChatAdapter(entry.adapter) !== isChatAdapter(c.adapter)) {
      problems.push({ param: `${param}.adapter`, message: `a model's adapter must be of the same kind (chat or media) as the channel's ${c.adapter}` });
    }
    if (endpoint !== undefined && (endpoint === 'chat') !== isChatAdapter(adapter)) {
      problems.push({ param: `${param}.model`, message: `'${entry.model}' is a ${endpoint} model; the ${adapter} adapter cannot serve it` });
    }
    if (entry.protocols) checkServes(`${param}.protocols`, adapter, entry.protocols);
    else if (!c.protocols && entry.adapter) checkServes(`${param}.adapter`, adapter, defaultProtocols(adapter));
  });
  return problems;
}
