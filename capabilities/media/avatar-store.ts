import { errors } from '../../domain/errors';
import { publicStatus, type TaskDocument } from '../../domain/media/task';
import type { MediaModels } from './store';
import { isPresetAvatar } from './avatar-presets';

/**
 * Avatars are `avatar` tasks in the `avatars` collection: the avatar id is
 * the task id. Deleting one sets `deleted_at` on the task document (a field
 * the task schema does not know, written by a targeted update); deleted
 * avatars are gone from get, list and use.
 */
export const AVATAR_ENDPOINT = 'avatars';
/** Spec 2 section 8: the avatar list shows at most 200. */
export const AVATAR_LIST_MAX = 200;

export type AvatarDoc = TaskDocument & { deleted_at?: Date | null };

const notDeleted = { deleted_at: { $exists: false } };

/** The public avatar record (spec 2 section 2.3), plus `cover_url` once ready. */
export function avatarView(doc: AvatarDoc) {
  const extra = doc.result?.extra ?? {};
  return {
    id: doc._id,
    object: 'avatar',
    name: String(doc.input.name ?? ''),
    source_kind: String(doc.input.source_kind ?? 'image'),
    status: publicStatus('avatar', doc.state),
    error: failureText(doc),
    cover_url: typeof extra.cover_url === 'string' ? extra.cover_url : null,
    created_at: doc.created_at.toISOString(),
  };
}

/** `error`: null unless the creation failed. */
function failureText(doc: AvatarDoc): string | null {
  if (doc.state === 'queued' || doc.state === 'running' || doc.state === 'succeeded') return null;
  return doc.error_message ?? doc.error_code ?? 'avatar creation failed';
}

/** One of the account's avatars that is not deleted, or null. */
export async function findAvatar(db: MediaModels, accountId: string, id: string): Promise<AvatarDoc | null> {
  const doc = await db.Task.findOne({ _id: id, account_id: accountId, endpoint: AVATAR_ENDPOINT, ...notDeleted }).lean<AvatarDoc>();
  return doc ?? null;
}

/** The account's avatars, newest first, at most 200. */
export async function listAvatars(db: MediaModels, accountId: string): Promise<AvatarDoc[]> {
  return db.Task.find({ account_id: accountId, endpoint: AVATAR_ENDPOINT, ...notDeleted })
    .sort({ created_at: -1, _id: -1 })
    .limit(AVATAR_LIST_MAX)
    .lean<AvatarDoc[]>();
}

/** Marks the avatar deleted: one targeted $set of a field outside the task schema. */
export async function markAvatarDeleted(db: MediaModels, id: string): Promise<void> {
  await db.Task.collection.updateOne({ _id: id as never }, { $set: { deleted_at: new Date(), updated_at: new Date() } });
}

/** What a dh-avatar video needs to know about its `avatar`. */
export interface UsableAvatar {
  /** The public id (a created avatar's task id, or a preset id). */
  id: string;
  preset: boolean;
  /** The id the upstream knows the avatar by (`av_...`), the preset id for presets. */
  upstreamAvatarId: string;
  /** The channel the avatar was created on (a vendor's avatars belong to that account); null for presets. */
  channel: string | null;
}

/**
 * Resolve the `avatar` of a dh-avatar video: a preset, or an avatar of this
 * account that is ready and not deleted. Anything else is 400
 * invalid_request (spec 2 section 7.4: missing, not owned or not ready).
 */
export async function usableAvatar(db: MediaModels, accountId: string, id: unknown): Promise<UsableAvatar> {
  if (typeof id !== 'string' || id === '') throw errors.invalidRequest('avatar is required: an avatar id or a preset id', 'avatar');
  if (isPresetAvatar(id)) return { id, preset: true, upstreamAvatarId: id, channel: null };
  const doc = await findAvatar(db, accountId, id);
  if (!doc) throw errors.invalidRequest(`avatar ${id} does not exist or does not belong to this account`, 'avatar');
  const upstreamId = doc.result?.extra?.avatar_id;
  if (doc.state !== 'succeeded' || typeof upstreamId !== 'string') {
    throw errors.invalidRequest(`avatar ${id} is not ready (status ${publicStatus('avatar', doc.state)})`, 'avatar');
  }
  return { id, preset: false, upstreamAvatarId: upstreamId, channel: doc.upstream?.channel ?? null };
}
