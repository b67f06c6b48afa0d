import { z } from 'zod';

/**
 * The one rule for the names people give API keys, agent keys and agents: 1
 * to 200 characters, none of them a control character (C0 `U+0000`-`U+001F`,
 * DEL, C1 `U+0080`-`U+009F`: NUL, tab, CR, LF...) or a bidirectional
 * embedding, override or isolate (`U+202A`-`U+202E`, `U+2066`-`U+2069`). Those
 * names reach headers, the console, logs and the usage CSV, where a line break
 * forges a line and a bidi override makes a name read as another.
 *
 * A pattern rather than a refinement, so the OpenAPI document states it too.
 */
const NO_CONTROLS = /^[^\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]*$/;

export const DISPLAY_NAME_MESSAGE = 'must not contain control characters (NUL, tab, CR, LF, C1) or bidirectional controls (U+202A-U+202E, U+2066-U+2069)';

/** A name field: `base` is `z.string()`, or `z.string().trim()` where surrounding blanks are dropped first. */
export function displayName(base: z.ZodString = z.string()): z.ZodString {
  return base.min(1).max(200).regex(NO_CONTROLS, DISPLAY_NAME_MESSAGE);
}
