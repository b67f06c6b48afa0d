// Deterministic output and token counting, shared by every chat dialect.
// The rules (also in README.md):
//   - prompt tokens  = max(1, ceil(characters of all message text / 4))
//   - output words   = min(cap, DEFAULT_OUTPUT_TOKENS or the length set by
//                      POST /_control/output), one token per word,
//                      drawn from WORDS by a PRNG seeded with FNV-1a(seed text)
//   - tool arguments = a small JSON object filled from the tool's JSON schema

export const DEFAULT_OUTPUT_TOKENS = 24;

export const WORDS: readonly string[] = [
  'alpha', 'bright', 'cedar', 'delta', 'ember', 'fable', 'garnet', 'harbor',
  'island', 'jasper', 'kernel', 'lumen', 'meadow', 'nectar', 'orbit', 'prism',
  'quartz', 'river', 'signal', 'timber', 'umber', 'vector', 'willow', 'xenon',
  'yonder', 'zephyr', 'anchor', 'beacon', 'canyon', 'dune', 'echo', 'falcon',
  'glacier', 'horizon', 'ivory', 'jungle', 'kite', 'lagoon', 'marble', 'nebula',
  'oasis', 'pepper', 'quiver', 'ripple', 'summit', 'tundra', 'utopia', 'velvet',
  'walnut', 'yarrow', 'zenith', 'amber', 'basalt', 'cobalt', 'drift', 'ether',
  'fjord', 'grove', 'haze', 'indigo', 'juniper', 'krypton', 'lotus', 'mosaic',
];

/** FNV-1a, 32 bit. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a tiny deterministic PRNG returning uint32 values. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** The output tokens for a seed: word 0 bare, later words with a leading space. */
export function outputTokens(seedText: string, count: number): string[] {
  const next = prng(hash32(seedText));
  const out: string[] = new Array(Math.max(0, count));
  for (let i = 0; i < out.length; i++) {
    const w = WORDS[next() % WORDS.length];
    out[i] = i === 0 ? w : ' ' + w;
  }
  return out;
}

export function tokensForChars(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/** The answer's length when the request's cap allows it (POST /_control/output; reset: 24). */
let length = DEFAULT_OUTPUT_TOKENS;

export function setOutputLength(tokens: number): void {
  length = tokens;
}

export function outputLength(): number {
  return length;
}

/** Output length: min(cap, the answer's length, 24 unless set); a cap below it ends the turn with "length". */
export function outputBudget(cap: unknown): { count: number; capped: boolean } {
  if (typeof cap === 'number' && Number.isFinite(cap) && cap >= 0 && cap < length) {
    return { count: Math.floor(cap), capped: true };
  }
  return { count: length, capped: false };
}

const TEXT_KEYS = ['content', 'text', 'parts', 'output', 'functionResponse', 'response'];

/**
 * Characters of message text: string contents, `text` fields of parts, and
 * the text of tool results, found recursively. Images, ids, roles and tool
 * call arguments do not count.
 */
export function textChars(node: unknown, depth = 0): number {
  if (typeof node === 'string') return node.length;
  if (depth > 8 || node === null || typeof node !== 'object') return 0;
  let n = 0;
  if (Array.isArray(node)) {
    for (const item of node) n += textChars(item, depth + 1);
    return n;
  }
  const o = node as Record<string, unknown>;
  for (const k of TEXT_KEYS) {
    const v = o[k];
    if (v !== undefined) n += textChars(v, depth + 1);
  }
  return n;
}

/** Every text string inside a message, joined by newlines (the hash seed). */
export function textOf(node: unknown, depth = 0): string {
  if (typeof node === 'string') return node;
  if (depth > 8 || node === null || typeof node !== 'object') return '';
  const parts: string[] = [];
  if (Array.isArray(node)) {
    for (const item of node) {
      const t = textOf(item, depth + 1);
      if (t) parts.push(t);
    }
  } else {
    const o = node as Record<string, unknown>;
    for (const k of TEXT_KEYS) {
      if (o[k] === undefined) continue;
      const t = textOf(o[k], depth + 1);
      if (t) parts.push(t);
    }
  }
  return parts.join('\n');
}

/** A small deterministic JSON object matching (loosely) a JSON schema. */
export function toolArguments(schema: unknown, seedText: string): Record<string, unknown> {
  const next = prng(hash32(seedText));
  const v = valueFor(schema, next, 0);
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function valueFor(schema: unknown, next: () => number, depth: number): unknown {
  const s = (schema && typeof schema === 'object' ? schema : {}) as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[next() % s.enum.length];
  let type = s.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'string';
  if (typeof type === 'string') type = type.toLowerCase(); // Gemini writes STRING, OBJECT...
  if (type === undefined && s.properties) type = 'object';
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = s.properties && typeof s.properties === 'object' ? (s.properties as Record<string, unknown>) : {};
      if (depth > 2) return out;
      const required = Array.isArray(s.required) ? (s.required as unknown[]).filter((k): k is string => typeof k === 'string' && k in props) : [];
      const keys = required.length > 0 ? required : Object.keys(props).slice(0, 3);
      for (const k of keys) out[k] = valueFor(props[k], next, depth + 1);
      return out;
    }
    case 'integer':
      return next() % 100;
    case 'number':
      return (next() % 1000) / 10;
    case 'boolean':
      return next() % 2 === 0;
    case 'array':
      return depth > 2 ? [] : [valueFor(s.items, next, depth + 1)];
    default:
      return WORDS[next() % WORDS.length];
  }
}

/** Split a tool-call argument string into stream pieces of about 4 characters (one token each). */
export function argumentPieces(args: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < args.length; i += 4) pieces.push(args.slice(i, i + 4));
  return pieces.length > 0 ? pieces : [''];
}

// Ids shaped like the vendors' (prefix + opaque characters), unique per process.
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function randomChars(n: number, alphabet: string): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
  return s;
}
const RUN_ALNUM = randomChars(14, ALNUM);
const RUN_HEX = randomChars(24, '0123456789abcdef');
let idCounter = 0;

/** `prefix` + 14 random characters fixed per process + a counter, `width` characters of body at least. */
export function makeId(prefix: string, width = 24, hex = false): string {
  // Knuth's multiplicative hash is a bijection on 32-bit counters: unique, but not visibly sequential.
  const c = ++idCounter;
  const n = (Math.imul(c, 2654435761) >>> 0).toString(hex ? 16 : 36) + (c > 0xffffffff ? c.toString(36) : '');
  const base = hex ? RUN_HEX : RUN_ALNUM;
  const pad = Math.max(0, width - base.length - n.length);
  return prefix + base + '0'.repeat(pad) + n;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
