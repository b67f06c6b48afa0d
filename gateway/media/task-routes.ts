import type Router from '@koa/router';
import { errors } from '../../domain/errors';
import type { Channel, EndpointType, Model } from '../../domain/catalogue';
import type { TaskKind, TaskDocument } from '../../domain/media/task';
import { MediaTasks, TaskNotAccepted, type SubmitTask } from '../../capabilities/media/media-tasks';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState, Middleware } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { usageCapture } from '../middleware/usage-capture';
import { idempotency } from '../middleware/idempotency';
import { resolveModel } from '../model-access';
import { listTasks, parseListQuery } from '../../capabilities/media/list-query';
import { callbackUrl } from '../middleware/webhook-submission';
import { CALLBACK_KINDS } from '../../capabilities/webhooks/callback-url';
import { setHeldHeader, setTaskCostHeaders } from './cost-headers';

/** The rules of one media family (images, videos, music, speech, voices, avatars, transcripts). */
export interface MediaFamily {
  kind: TaskKind;
  /** Endpoint types of the models it takes; absent: any model with task channels. */
  endpointTypes?: readonly EndpointType[];
  /** How a no-channel refusal names the endpoint (`music generations`). */
  label: string;
  /** Middleware that runs first on every route of the family (error dialects). */
  first?: Middleware[];
}

/**
 * What every media route shares, built once per family: the middleware
 * chains of a charging submission and of a read, the model check, the
 * submission (whose usage row the task owns), and the list and get routes.
 */
export function mediaTaskRoutes(deps: ServiceDeps, router: Router<GatewayState>, family: MediaFamily) {
  const tasks = new MediaTasks(deps);
  const first = family.first ?? [];
  const read: Middleware[] = [...first, authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true }), rateLimit()];

  /** The model's task channels, or 503 no_channel_available (also for a model of another endpoint). */
  const channels = (model: Model, label = family.label): Channel[] => {
    const list = deps.catalogue().channels(model, 'task');
    if (list.length === 0 || (family.endpointTypes && !family.endpointTypes.includes(model.endpoint_type))) throw errors.noChannel(model.id, label);
    return list;
  };

  return {
    tasks,
    read,
    channels,

    /** Usage capture, authentication (billable), the rate limit, the body (`body` reads it), idempotency. */
    submitChain: (usageEndpoint: string, body: Middleware): Middleware[] => [
      ...first,
      usageCapture(deps, usageEndpoint),
      authenticate(deps, { methods: 'all', billable: true, touchLastUsed: true }),
      rateLimit(),
      body,
      // Async families take a `callback_url` for their final-state webhook (docs/webhooks.md).
      ...(CALLBACK_KINDS.has(family.kind) ? [callbackUrl(deps)] : []),
      idempotency(deps),
    ],

    /** The requested model, allowed for this key and served by this family. */
    model(ctx: Ctx, requested: unknown, label?: string): Model {
      const model = resolveModel(deps, ctx, requested);
      channels(model, label);
      return model;
    },

    /** Accept the task (reserve, task document, workflow); from here its usage row is the task's own. */
    async submit(ctx: Ctx, task: Omit<SubmitTask, 'auth' | 'requestId' | 'kind'>): Promise<TaskDocument> {
      const doc = await tasks.submit({ ...task, auth: ctx.state.auth!, requestId: ctx.state.requestId, kind: family.kind, callbackUrl: ctx.state.callbackUrl })
        .catch((err: unknown) => {
          // A task closed as not accepted keeps the call's one usage row (error, cost 0): no second row.
          if (err instanceof TaskNotAccepted) ctx.state.usageRecorded = true;
          throw err;
        });
      ctx.state.usageRecorded = true;
      setHeldHeader(ctx, doc);
      return doc;
    },

    /** `GET path`: the account's tasks in these collections, newest first, `{object: 'list', data, next_cursor}`. */
    list(path: string, opts: { endpoints: string[]; statuses: string[]; view: (doc: TaskDocument) => unknown }): void {
      router.get(path, ...read, async (ctx) => {
        const q = parseListQuery(ctx.query, family.kind, opts.statuses);
        const page = await listTasks(deps.db, ctx.state.auth!.account.id, opts.endpoints, q);
        ctx.body = { object: 'list', data: page.items.map(opts.view), next_cursor: page.nextCursor };
      });
    },

    /** `GET path/:id`: one task of the account in these collections (404 otherwise). */
    get(path: string, opts: { endpoints: string[]; view: (doc: TaskDocument) => unknown }): void {
      router.get(path, ...read, async (ctx) => {
        const doc = await tasks.get(ctx.state.auth!.account.id, ctx.params.id, opts.endpoints);
        setTaskCostHeaders(ctx, doc);
        ctx.body = opts.view(doc);
      });
    },
  };
}
