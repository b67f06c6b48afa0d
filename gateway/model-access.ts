import { errors } from '../domain/errors';
import { isModelAllowed } from '../domain/api-key';
import type { Model } from '../domain/catalogue';
import type { CatalogueDeps } from '../capabilities/catalogue/deps';
import type { Ctx } from './context';

/**
 * Resolve the requested model id (aliases included) and check the key may
 * use it: unknown or placeholder -> model_not_found; whitelist -> model_not_allowed (an empty one: whatever was asked).
 */
export function resolveModel(deps: Pick<CatalogueDeps, 'catalogue'>, ctx: Ctx, requested: unknown): Model {
  if (typeof requested !== 'string' || requested === '') throw errors.invalidRequest('model is required', 'model');
  ctx.state.model = requested;
  ctx.state.requestedModel = requested;
  // An empty whitelist rejects every model, known or not (spec 1 section 2.1: every request gets model_not_allowed).
  const allowed = ctx.state.auth?.key.allowed_models;
  if (allowed && allowed.length === 0) throw errors.modelNotAllowed(requested);
  const model = deps.catalogue().resolve(requested);
  if (!model || !model.callable) throw errors.modelNotFound(requested);
  ctx.state.model = model.id;
  checkModelAccess(ctx, model, requested);
  return model;
}

/** model_not_allowed unless the key's whitelist names the model (its id, the name asked for, or an alias). */
export function checkModelAccess(ctx: Ctx, model: Model, requested: string): void {
  if (!isModelAllowed(ctx.state.auth!.key.allowed_models, [model.id, requested, ...model.aliases])) {
    throw errors.modelNotAllowed(requested);
  }
}
