import { z } from 'zod';
import {
  ChannelAdapter, ChannelId, ChannelProtocol, ChannelSeedSchema, EnvKeyName, ServeMode, type ChannelSeed, type ResolvedChannel,
} from './channels';

/**
 * The model registry. Data lives in data/catalogue.json (seeded into Mongo);
 * this module holds its schema and the lookups every other part uses.
 * Workflow-safe: no I/O here.
 */
export const PROTOCOLS = ['chat-completions', 'messages', 'responses', 'generate-content'] as const;
export type ChatProtocol = (typeof PROTOCOLS)[number];

/** Channels tried per request or task, for chat and media alike (spec 1 section 1, spec 2 channel ladder). */
export const MAX_CHANNEL_ATTEMPTS = 3;

export const CAPABILITIES = ['tools', 'vision', 'web_search', 'image_gen', 'video_gen', 'thinking', 'json', 'open-source'] as const;

export const EndpointType = z.enum([
  'chat', 'image', 'video', 'music', 'speech', 'voice', 'transcript', 'avatar', 'digital-human', 'clip', 'embedding',
]);
export type EndpointType = z.infer<typeof EndpointType>;

/**
 * One rung of a model's ladder on one protocol, resolved from the channel
 * objects (domain/channels.ts): `kind` says how the cell is served, `upstream`
 * which adapter calls the channel.
 */
export type Channel = ResolvedChannel;

/**
 * The pre-channels form: channels written inside each model, per protocol.
 * Still read from catalogue files (lifted into `channels[]` by `liftInlineChannels`).
 */
export const InlineChannelSchema = z.object({
  id: ChannelId,
  kind: ServeMode,
  upstream: ChannelAdapter,
  base_url: z.string(),
  api_key_env: EnvKeyName.optional(),
  priority: z.number().int().default(0),
  weight: z.number().int().positive().default(1),
  upstream_model: z.string().optional(),
  web_search: z.boolean().default(false),
});
export type InlineChannel = z.infer<typeof InlineChannelSchema>;

/** Prices in credits (decimal), converted to nano by domain/pricing. */
export const PriceSchema = z
  .object({
    input_per_1m: z.number().nonnegative().optional(),
    output_per_1m: z.number().nonnegative().optional(),
    cached_per_1m: z.number().nonnegative().optional(),
    per_image: z.number().nonnegative().optional(),
    /** Pixel-area tiers: above `threshold_pixels` the high price applies. */
    per_image_tiers: z.object({ threshold_pixels: z.number().int(), low: z.number(), high: z.number() }).optional(),
    per_reference_image: z.number().nonnegative().optional(),
    per_second: z.number().nonnegative().optional(),
    /** Per-second price by resolution or quality tier. */
    per_second_by_tier: z.record(z.string(), z.number().nonnegative()).optional(),
    per_request: z.number().nonnegative().optional(),
    per_character: z.number().nonnegative().optional(),
    per_creation: z.number().nonnegative().optional(),
  })
  .default({});

export const ModelSchema = z.object({
  id: z.string(),
  owned_by: z.string(),
  family: z.string(),
  endpoint_type: EndpointType,
  capabilities: z.array(z.enum(CAPABILITIES)).default([]),
  callable: z.boolean().default(true),
  retired: z.boolean().default(false),
  context_window: z.number().int().optional(),
  default_max_tokens: z.number().int().optional(),
  aliases: z.array(z.string()).default([]),
  pricing: PriceSchema,
  /** Media models: free-form per-model rules read by the media validators (grid size, lite tier, ...). */
  media: z.record(z.string(), z.unknown()).optional(),
});
/** A model as stored (without channels). */
export type ModelDef = z.infer<typeof ModelSchema>;
/** A model with its ladders. Chat: channels per client protocol; media: channels under `task`. A missing or empty list = no channel. */
export type Model = ModelDef & { channels: Record<string, Channel[]> };

export const PricingRulesSchema = z.object({
  /** Cache writes (cache_creation_input_tokens) cost input x multiplier for these families. */
  cache_write: z.object({ families: z.array(z.string()), multiplier: z.string() }),
  /** Time-limited promotions: price x multiplier (cached price too). */
  promotions: z.array(z.object({ family: z.string(), multiplier: z.string(), until: z.string().optional() })),
  /** Prompts of threshold tokens or more multiply input, cached and output prices for the whole turn. */
  long_context: z.object({ models: z.array(z.string()), threshold_tokens: z.number().int(), multiplier: z.string() }),
  /** Per server-side tool call fee for these families. */
  server_tool_fee: z.object({ families: z.array(z.string()), credits_per_call: z.string() }),
  /** Lines of a batch (capabilities/batches/): every token price x this (a batch discount); absent: 1.0. */
  batch_multiplier: z.string().regex(/^\d+(\.\d{1,9})?$/).optional(),
});
export type PricingRules = z.infer<typeof PricingRulesSchema>;

/** The catalogue file: pricing rules, channels declared once, models. A model may still carry inline `channels` (the older form). */
export const CatalogueFileSchema = z.object({
  pricing_rules: PricingRulesSchema,
  channels: z.array(ChannelSeedSchema).default([]),
  models: z.array(ModelSchema.extend({ channels: z.partialRecord(ChannelProtocol, z.array(InlineChannelSchema)).optional() })),
});
/** A catalogue as seeded: every channel declared once, models without inline channels. */
export interface CatalogueFile {
  pricing_rules: PricingRules;
  channels: ChannelSeed[];
  models: ModelDef[];
}

export class Catalogue {
  private readonly byId = new Map<string, Model>();
  readonly models: Model[];

  /**
   * `ladders`: each model's channels per protocol (domain/channels.ts `resolveChannels`); absent: no channels.
   * `offLadder`: the same for disabled or deleted channels, which serve no new request but still finish
   * the tasks they accepted (`channel`).
   */
  constructor(
    models: ModelDef[],
    readonly pricingRules: PricingRules,
    ladders: ReadonlyMap<string, Record<string, Channel[]>> = new Map(),
    private readonly offLadder: ReadonlyMap<string, Record<string, Channel[]>> = new Map(),
  ) {
    this.models = models.map((m) => ({ ...m, channels: ladders.get(m.id) ?? {} }));
    for (const m of this.models) this.byId.set(m.id, m);
    for (const m of this.models) for (const alias of m.aliases) if (!this.byId.has(alias)) this.byId.set(alias, m);
  }

  /** Resolve an id or an older alias to the current model. */
  resolve(id: string): Model | undefined {
    return this.byId.get(id);
  }

  /** The model's ladder on one protocol, in order (priority, then weight). */
  channels(model: Model, protocol: string): Channel[] {
    return model.channels[protocol] ?? [];
  }

  /** One channel of the model by id, on its ladder or off it (disabled, deleted): a task polls the channel that accepted it. */
  channel(model: Model, protocol: string, id: string): Channel | undefined {
    return this.channels(model, protocol).find((c) => c.id === id) ?? this.offLadder.get(model.id)?.[protocol]?.find((c) => c.id === id);
  }
}

/** Replace ${VAR} in a channel URL with values from the config. */
export function substituteUrl(url: string, vars: Record<string, string>): string {
  return url.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => vars[name] ?? '');
}

/**
 * The catalogue of a parsed file: inline model channels (the older form) are
 * lifted into channel objects, one per id, each listing the models it serves
 * with the protocols, adapter and upstream name of each. A channel declared in
 * `channels[]` wins over an inline one of the same id.
 */
export function liftInlineChannels(file: z.output<typeof CatalogueFileSchema>): CatalogueFile {
  const declared = new Set(file.channels.map((c) => c.id));
  const lifted = new Map<string, ChannelSeed>();
  for (const m of file.models) {
    for (const [protocol, list] of Object.entries(m.channels ?? {})) {
      for (const c of list) {
        if (declared.has(c.id)) continue;
        let ch = lifted.get(c.id);
        if (!ch) {
          ch = {
            id: c.id, vendor: 'upstream', adapter: c.upstream, base_url: c.base_url,
            credentials: c.api_key_env ? { env: c.api_key_env } : { none: true },
            priority: c.priority, weight: c.weight, capabilities: {}, models: [], enabled: true,
          };
          lifted.set(c.id, ch);
        }
        let entry = ch.models.find((e) => e.model === m.id);
        if (!entry) ch.models.push((entry = { model: m.id, protocols: {} }));
        entry.protocols![protocol as ChannelProtocol] = c.kind;
        if (c.upstream !== ch.adapter) entry.adapter = c.upstream;
        if (c.upstream_model) entry.upstream_model = c.upstream_model;
        if (c.web_search) {
          const caps = (ch.capabilities[protocol as ChannelProtocol] ??= []);
          if (!caps.includes('web_search')) caps.push('web_search');
        }
      }
    }
  }
  return {
    pricing_rules: file.pricing_rules,
    channels: [...file.channels, ...lifted.values()],
    models: file.models.map(({ channels: _inline, ...m }) => m),
  };
}
