import { GatewayError } from '../../domain/errors';
import type { Channel, Model } from '../../domain/catalogue';

/**
 * Built-in tool rules (spec 1 section 4.1):
 * 1. web_search / image_generation need stream: true (400 invalid_request), on chat completions only (section 4.4:
 *    the responses endpoint answers image_generation without a stream);
 * 2. image_generation only for its one family (400 tool_not_supported);
 * 3. web_search gated per model and channel (400 tool_not_supported);
 * 4. function tools are unrestricted.
 * Rules 2 and 3 say what the tools are: they hold on the responses endpoint too.
 * Returns the channels that can serve the request.
 */
export const IMAGE_GENERATION_FAMILY = 'gpt';

export function builtinToolsOf(tools: unknown): Set<string> {
  const found = new Set<string>();
  if (!Array.isArray(tools)) return found;
  for (const t of tools) {
    const type = (t as { type?: unknown })?.type;
    if (type === 'web_search' || type === 'image_generation') found.add(type);
  }
  return found;
}

export function applyBuiltinToolRules(model: Model, channels: Channel[], builtins: Set<string>, stream: boolean, opts: { streamRequired: boolean } = { streamRequired: true }): Channel[] {
  if (builtins.size === 0) return channels;
  if (opts.streamRequired && !stream) {
    throw new GatewayError('invalid_request', `built-in tools (${[...builtins].join(', ')}) require stream: true on this endpoint`, { param: 'stream' });
  }
  if (builtins.has('image_generation') && model.family !== IMAGE_GENERATION_FAMILY) {
    throw new GatewayError('tool_not_supported', `the image_generation tool is not supported by model '${model.id}'`, { param: 'tools' });
  }
  if (builtins.has('web_search')) {
    const able = model.capabilities.includes('web_search') ? channels.filter((c) => c.web_search) : [];
    if (able.length === 0) throw new GatewayError('tool_not_supported', `the web_search tool is not supported by model '${model.id}' on any of its channels`, { param: 'tools' });
    return able;
  }
  return channels;
}
