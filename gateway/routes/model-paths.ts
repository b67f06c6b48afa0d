/**
 * `/v1/models/{x}` holds two resources: a registry entry (`GET`, OpenAI's and
 * Anthropic's models.retrieve) and, when `{x}` is `{model}:{method}` with one
 * of Google's model methods, that method (`POST`, spec 1 section 4.3). OpenAI's
 * own ids may hold colons (`ft:gpt-4o:org`), so only Google's method names
 * tell them apart. Both routes are regular expressions, so the router's own
 * 405 lists exactly the methods the path's resource has (`Allow: POST` on a
 * method path, `GET, HEAD` on an entry).
 */
export const GOOGLE_MODEL_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent', 'batchEmbedContents', 'batchGenerateContent'] as const;

const METHOD = `:(?:${GOOGLE_MODEL_METHODS.join('|')})`;

/** `POST /v1/models/{model}:{method}`; the capture is the segment, undecoded. */
export const MODEL_METHOD_PATH = new RegExp(`^/v1/models/([^/]+${METHOD})/?$`, 'i');

/** `GET /v1/models/{model}` for any segment that is not a Google method path; the capture is the id, undecoded. */
export const MODEL_ENTRY_PATH = new RegExp(`^/v1/models/((?![^/]*${METHOD}/?$)[^/]+)/?$`, 'i');

/** The names the two routes carry: the metrics label and the OpenAPI test read them (a RegExp route has no template). */
export const MODEL_METHOD_ROUTE = '/v1/models/:target';
export const MODEL_ENTRY_ROUTE = '/v1/models/:model';
