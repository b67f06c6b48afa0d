/**
 * A route whose path is a regular expression (when a path-to-regexp pattern cannot say which paths are its
 * resource: ./model-paths.ts, the avatar that is not `presets`) carries its template as its name, for the
 * metrics label and the OpenAPI test, and its parameter as the first capture.
 */

/** The path segment a RegExp route captured, percent-decoded (@koa/router decodes named parameters only). */
export function capturedSegment(captures: string[] | undefined): string {
  return decodeURIComponent(captures?.[0] ?? '');
}
