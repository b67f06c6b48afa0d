/** JSON.parse that answers undefined instead of throwing (stream frames from upstreams). */
export function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
