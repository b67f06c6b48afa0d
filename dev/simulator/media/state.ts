import type http from 'node:http';
import { FaultBook, type TaskFaults } from './faults';
import { contentTypeFor, makeMp3, makeMp4, makePng } from './bytes';

/** Which vendor-shaped API a recorded submission went to. */
export type MediaApi =
  | 'openai_images'
  | 'openai_images_task'
  | 'midjourney'
  | 'ark_video'
  | 'digital_human'
  | 'transcript'
  | 'suno'
  | 'minimax_t2a'
  | 'minimax_t2a_async'
  | 'minimax_voice_clone'
  | 'minimax_file';

/** One submission the simulator accepted (async task or sync call). */
export interface SimTask {
  id: string;
  api: MediaApi;
  channel: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The request body as received (multipart: fields plus file descriptions). */
  body: unknown;
  model: string;
  async: boolean;
  submittedAt: number;
  dueAt: number;
  faults: TaskFaults;
  polls: number;
  cancelledAt: number | null;
  deleted: boolean;
  /** API-specific output plan fixed at submission (counts, seconds, ...). */
  plan: Record<string, unknown>;
}

/** A rejected submission (submit-level fault), kept for assertions. */
export interface RejectedSubmission {
  channel: string;
  method: string;
  path: string;
  fault: string;
  at: number;
}

export interface SimFile {
  contentType: string;
  availableAt: number;
  expiresAt: number | null;
  make: () => Buffer;
}

export interface MediaOptions {
  /** Task duration scale in ms; 0 = every task completes on its first poll. Default 1000. */
  baseDelayMs?: number;
  /** Clock for task timelines; default Date.now. */
  now?: () => number;
  /** Result link lifetime; default 24 h. */
  linkTtlMs?: number;
  /** Delay of the synchronous transcript call; default baseDelayMs. */
  transcriptDelayMs?: number;
  /** Video model ids that report `progress` (besides ids containing "progress"). */
  progressModels?: string[];
}

export const DAY_MS = 24 * 60 * 60 * 1000;

/** Everything the media simulator remembers; reset by POST /_control/media/reset. */
export class MediaState {
  readonly faults = new FaultBook();
  readonly tasks = new Map<string, SimTask>();
  readonly rejected: RejectedSubmission[] = [];
  readonly files = new Map<string, SimFile>();
  readonly hung = new Set<http.ServerResponse>();
  /** MiniMax: cloned voices per channel (account). */
  readonly voices = new Map<string, Map<string, { voice_id: string; created_time: string; description: string[] }>>();
  /** MiniMax: uploaded and generated files by numeric file_id. */
  readonly minimaxFiles = new Map<number, { channel: string; filename: string; purpose: string; bytes: number; createdAt: number; key: string }>();
  private seq = 0;

  readonly baseDelayMs: number;
  readonly linkTtlMs: number;
  readonly transcriptDelayMs: number;
  readonly progressModels: Set<string>;
  readonly now: () => number;

  constructor(opts: MediaOptions = {}) {
    this.baseDelayMs = opts.baseDelayMs ?? 1000;
    this.linkTtlMs = opts.linkTtlMs ?? DAY_MS;
    this.transcriptDelayMs = opts.transcriptDelayMs ?? this.baseDelayMs;
    this.progressModels = new Set(opts.progressModels ?? []);
    this.now = opts.now ?? Date.now;
  }

  /** Next value of the one deterministic counter behind every id. */
  next(): number {
    this.seq += 1;
    return this.seq;
  }

  reset(): void {
    this.faults.clear();
    this.tasks.clear();
    this.rejected.length = 0;
    this.files.clear();
    this.voices.clear();
    this.minimaxFiles.clear();
    for (const res of this.hung) res.socket?.destroy();
    this.hung.clear();
    this.seq = 0;
  }

  /** Registers a generated file under /files/{key}; bytes are made when served. */
  addFile(key: string, kind: { seed: string; seconds?: number }, availableAt: number): void {
    const type = contentTypeFor(key);
    const seconds = kind.seconds ?? 1;
    const make = type === 'image/png' ? () => makePng(kind.seed) : type === 'video/mp4' ? () => makeMp4(kind.seed, seconds) : () => makeMp3(kind.seed, seconds);
    this.files.set(key, { contentType: type, availableAt, expiresAt: availableAt + this.linkTtlMs, make });
  }

  /** Registers uploaded bytes (no expiry). */
  addUpload(key: string, contentType: string, data: Buffer): void {
    this.files.set(key, { contentType, availableAt: this.now(), expiresAt: null, make: () => data });
  }

  fileUrl(publicBaseUrl: string, key: string): string {
    const file = this.files.get(key);
    const base = `${publicBaseUrl.replace(/\/+$/, '')}/files/${key}`;
    return file?.expiresAt ? `${base}?expires=${Math.floor(file.expiresAt / 1000)}` : base;
  }
}
