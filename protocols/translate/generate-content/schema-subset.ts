/**
 * JSON Schema -> the OpenAPI 3.0 subset Gemini's `Schema` accepts (type,
 * format, description, nullable, enum, properties, required, items, anyOf,
 * bounds, ...). Types become the proto enum names (STRING, OBJECT, ...),
 * `["string","null"]` and `anyOf: [..., {type: "null"}]` become `nullable`,
 * `const` becomes a one-value enum, local `$ref`s are inlined, and keywords
 * Gemini rejects (`additionalProperties`, `$schema`, `strict`, ...) are left out.
 */

type Json = Record<string, unknown>;

const COPY = [
  'description',
  'title',
  'format',
  'pattern',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'minProperties',
  'maxProperties',
  'default',
  'example',
  'nullable',
  'propertyOrdering',
] as const;

const MAX_REF_DEPTH = 16;

export function toGeminiSchema(schema: Json): Json {
  const defs = { ...(asJson(schema.definitions) ?? {}), ...(asJson(schema.$defs) ?? {}) };
  return convert(schema, defs, 0);
}

function convert(input: Json, defs: Json, depth: number): Json {
  let schema = input;
  if (typeof schema.$ref === 'string' && depth < MAX_REF_DEPTH) {
    const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name === undefined ? undefined : asJson(defs[name]);
    if (target) schema = { ...target, ...withoutRef(schema) };
  }
  const out: Json = {};
  for (const key of COPY) if (schema[key] !== undefined) out[key] = schema[key];

  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  const real = types.filter((t) => t !== 'null');
  if (real.length < types.length) out.nullable = true;
  if (real.length === 1 && typeof real[0] === 'string') out.type = real[0].toUpperCase();
  else if (real.length > 1) out.anyOf = real.map((t) => ({ type: String(t).toUpperCase() }));

  if (schema.const !== undefined) out.enum = [String(schema.const)];
  else if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) out.enum = schema.enum;
  if (out.enum) out.type ??= 'STRING';
  else if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    // Gemini enums are strings only: fall back to a described value list.
    out.description = [out.description, `One of: ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`]
      .filter(Boolean)
      .join('. ');
  }

  const props = asJson(schema.properties);
  if (props) {
    const mapped: Json = {};
    for (const k in props) {
      const p = asJson(props[k]);
      mapped[k] = p ? convert(p, defs, depth + 1) : {};
    }
    out.properties = mapped;
    out.type ??= 'OBJECT';
  }
  if (Array.isArray(schema.required)) out.required = schema.required;
  const items = asJson(schema.items);
  if (items) out.items = convert(items, defs, depth + 1);

  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (union) {
    const branches: Json[] = [];
    for (const b of union) {
      const j = asJson(b);
      if (!j) continue;
      if (j.type === 'null') out.nullable = true;
      else branches.push(convert(j, defs, depth + 1));
    }
    if (branches.length === 1) Object.assign(out, branches[0], out.nullable ? { nullable: true } : {});
    else if (branches.length > 1) out.anyOf = branches;
  }
  return out;
}

function withoutRef(schema: Json): Json {
  const { $ref: _ref, ...rest } = schema;
  return rest;
}

function asJson(v: unknown): Json | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}
