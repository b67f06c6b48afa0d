/**
 * Gemini `Schema` (OpenAPI subset, proto enum type names) -> JSON Schema,
 * for upstreams that take JSON Schema: types lower-cased, `nullable` folded
 * into a `["t", "null"]` type, Gemini-only `propertyOrdering` left out.
 */
export function fromGeminiSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in schema) {
    const v = schema[key];
    switch (key) {
      case 'type':
        out.type = typeof v === 'string' ? v.toLowerCase() : v;
        break;
      case 'nullable':
      case 'propertyOrdering':
        break;
      case 'properties': {
        const props: Record<string, unknown> = {};
        for (const [k, p] of Object.entries(asJson(v) ?? {})) props[k] = asJson(p) ? fromGeminiSchema(p as Record<string, unknown>) : p;
        out.properties = props;
        break;
      }
      case 'items':
        out.items = asJson(v) ? fromGeminiSchema(v as Record<string, unknown>) : v;
        break;
      case 'anyOf':
        out.anyOf = Array.isArray(v) ? v.map((b) => (asJson(b) ? fromGeminiSchema(b as Record<string, unknown>) : b)) : v;
        break;
      default:
        out[key] = v;
    }
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

function asJson(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
