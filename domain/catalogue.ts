import { z } from 'zod';

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

/** How a protocol cell of the model-by-protocol matrix is served (spec 1 section 4.10). */
export const ChannelKind = z.enum(['native', 'translated', 'upstream-converted']);

export const ChannelSchema = z.object({
  id: z.string(),
  kind: ChannelKind,
  /** The wire protocol the upstream speaks on this channel (for media: the provider adapter name). */
  upstream: z.string(),
  base_url: z.string(),
  /** Env var holding the upstream API key; the simulator accepts any. */
  api_key_env: z.string().optional(),
  /** Lower is tried first; channels of equal priority are ordered by weight. */
  priority: z.number().int().default(0),
  weight: z.number().int().positive().default(1),
  /** Upstream model id when it differs from the public id. */
  upstream_model: z.string().optional(),
  web_search: z.boolean().default(false),
});
export type Channel = z.infer<typeof ChannelSchema>;

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
  /** Chat: channels per client protocol; media: channels under `task`. A missing or empty list = no channel. */
  channels: z.record(z.string(), z.array(ChannelSchema)).default({}),
});
export type Model = z.infer<typeof ModelSchema>;

export const PricingRulesSchema = z.object({
  /** Cache writes (cache_creation_input_tokens) cost input x multiplier for these families. */
  cache_write: z.object({ families: z.array(z.string()), multiplier: z.string() }),
  /** Time-limited promotions: price x multiplier (cached price too). */
  promotions: z.array(z.object({ family: z.string(), multiplier: z.string(), until: z.string().optional() })),
  /** Prompts of threshold tokens or more multiply input, cached and output prices for the whole turn. */
  long_context: z.object({ models: z.array(z.string()), threshold_tokens: z.number().int(), multiplier: z.string() }),
  /** Per server-side tool call fee for these families. */
  server_tool_fee: z.object({ families: z.array(z.string()), credits_per_call: z.string() }),
});
export type PricingRules = z.infer<typeof PricingRulesSchema>;

export const CatalogueFileSchema = z.object({
  pricing_rules: PricingRulesSchema,
  models: z.array(ModelSchema),
});
export type CatalogueFile = z.infer<typeof CatalogueFileSchema>;

export class Catalogue {
  private readonly byId = new Map<string, Model>();

  constructor(readonly models: Model[], readonly pricingRules: PricingRules) {
    for (const m of models) this.byId.set(m.id, m);
    for (const m of models) for (const alias of m.aliases) if (!this.byId.has(alias)) this.byId.set(alias, m);
  }

  /** Resolve an id or an older alias to the current model. */
  resolve(id: string): Model | undefined {
    return this.byId.get(id);
  }

  channels(model: Model, protocol: string): Channel[] {
    const list = model.channels[protocol] ?? [];
    return [...list].sort((a, b) => a.priority - b.priority || b.weight - a.weight);
  }
}

/** Replace ${VAR} in channel URLs with values from the environment/config. */
export function substituteUrls(file: CatalogueFile, vars: Record<string, string>): CatalogueFile {
  const sub = (s: string) => s.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => vars[name] ?? '');
  return {
    ...file,
    models: file.models.map((m) => ({
      ...m,
      channels: Object.fromEntries(
        Object.entries(m.channels).map(([p, list]) => [p, list.map((c) => ({ ...c, base_url: sub(c.base_url) }))]),
      ),
    })),
  };
}
