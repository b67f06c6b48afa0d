import type { Model } from 'mongoose';
import type { Channel } from '../../domain/catalogue';
import type { ProviderOutcome, TaskDocument } from '../../domain/media/task';
import type { MediaHttp } from './http';

/** Large files kept out of task documents and Temporal payloads, in chunks (providers/media/images-files.ts). */
export type TaskFiles = Model<TaskFileDoc>;

/** One chunk: `_id` is `{group}/{file}/{chunk}`; group = the submission's request id or the task id (the schema: capabilities/media/store.ts). */
export interface TaskFileDoc {
  _id: string;
  group: string;
  content_type: string;
  data: Buffer;
  created_at: Date;
}

/** What a provider adapter gets for one call: the channel, the task (its validated input) and HTTP. */
export interface ProviderCall {
  channel: Channel;
  task: Pick<TaskDocument, '_id' | 'model' | 'input' | 'kind' | 'endpoint' | 'request_id'>;
  http: MediaHttp;
  apiKey: string;
  /** The upstream model id for this channel. */
  upstreamModel: string;
  /** Large files kept out of the task document (uploads, big answers): providers/media/images-files.ts. */
  taskFiles?: TaskFiles;
}

/** A submission either finished at once (synchronous vendor APIs) or gave an upstream task id to poll. */
export type SubmitResult = { kind: 'done'; outcome: ProviderOutcome } | { kind: 'task'; upstreamTaskId: string };

export type { ProviderOutcome };

export interface PollResult {
  state: 'queued' | 'running' | 'succeeded' | 'failed' | 'expired' | 'cancelled';
  progress?: number | null;
  /** Present when the state is final. */
  outcome?: ProviderOutcome;
}

export interface MediaProvider {
  /** Catalogue channel `upstream` value this adapter serves. */
  name: string;
  submit(call: ProviderCall): Promise<SubmitResult>;
  poll?(call: ProviderCall, upstreamTaskId: string): Promise<PollResult>;
}
