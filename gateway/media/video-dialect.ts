import type { ServiceDeps } from '../deps';
import type { Ctx, Middleware } from '../context';
import { parseJsonBody, readRaw } from '../middleware/body';
import { usesDigitalHumanDialect } from '../../capabilities/media/video-submission';

/**
 * First on every avatar and clip-template route, so even authentication
 * refusals use the digital-human codes (spec 2 section 7.4).
 */
export const digitalHumanDialect: Middleware = async (ctx, next) => {
  ctx.state.errorDialect = 'digital-human';
  await next();
};

/**
 * First middleware of `POST /v1/videos/generations`: digital-human and clip
 * submissions answer refusals in the digital-human dialect (spec 2 section
 * 7.4: 401 authentication_error, 403 model_not_allowed, 404 model_not_found,
 * 400 invalid_request_error), other video models in the general one. The
 * model is only known from the body, so on an error this reads the model
 * from the parsed body, or from the body still unread when the refusal came
 * first (authentication), and sets the dialect before the error handler renders it.
 */
export function videoErrorDialect(deps: ServiceDeps, bodyLimit: number): Middleware {
  return async function dialectByModel(ctx: Ctx, next) {
    try {
      await next();
    } catch (err) {
      const model = await requestedModel(ctx, bodyLimit).catch(() => undefined);
      if (model !== undefined && usesDigitalHumanDialect(deps.catalogue().resolve(model))) ctx.state.errorDialect = 'digital-human';
      throw err;
    }
  };
}

async function requestedModel(ctx: Ctx, bodyLimit: number): Promise<string | undefined> {
  let body = ctx.state.body;
  if (body === undefined && ctx.state.rawBody === undefined && !ctx.req.readableDidRead && !ctx.req.readableEnded) {
    body = parseJsonBody(await readRaw(ctx, bodyLimit));
  }
  const model = (body as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' ? model : undefined;
}
