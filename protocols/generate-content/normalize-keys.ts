/**
 * Google's REST endpoints parse JSON with the proto3 mapping, which accepts
 * both lowerCamelCase and the original snake_case field names; Google's own
 * curl samples send `system_instruction` and `inline_data`. This renames the
 * snake_case field names to camelCase at the structural levels only, never
 * inside user data (`functionCall.args`, `functionResponse.response`,
 * schemas), and copies an object only when something changed.
 */

type Walker = (value: unknown) => unknown;
interface Level {
  [camelKey: string]: Walker;
}

function camel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function level(children: Level = {}): Walker {
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const src = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const key in src) {
      const name = key.includes('_') ? camel(key) : key;
      const walk = children[name];
      const before = src[key];
      const after = walk ? walk(before) : before;
      if (name !== key || after !== before) {
        out ??= { ...src };
        if (name !== key) {
          delete out[key];
          // camelCase wins when a client sent both spellings.
          if (name in src) continue;
        }
        out[name] = after;
      }
    }
    return out ?? value;
  };
}

function list(item: Walker): Walker {
  return (value) => {
    if (!Array.isArray(value)) return value;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const after = item(value[i]);
      if (after !== value[i]) {
        out ??= value.slice();
        out[i] = after;
      }
    }
    return out ?? value;
  };
}

const leaf = level();
const part = level({
  inlineData: leaf,
  fileData: leaf,
  functionCall: leaf,
  functionResponse: leaf,
  executableCode: leaf,
  codeExecutionResult: leaf,
  videoMetadata: leaf,
});
const content = level({ parts: list(part) });
const tool = level({
  functionDeclarations: list(leaf),
  googleSearch: leaf,
  googleSearchRetrieval: leaf,
  codeExecution: leaf,
  urlContext: leaf,
});
const request = level({
  contents: list(content),
  systemInstruction: content,
  generationConfig: level({ thinkingConfig: leaf }),
  tools: list(tool),
  toolConfig: level({ functionCallingConfig: leaf }),
  safetySettings: list(leaf),
});

export function normalizeGenerateContentKeys(body: unknown): unknown {
  return request(body);
}
