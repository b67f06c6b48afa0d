/**
 * Platform preset avatars (spec 2 section 4.5): free, usable by every key as
 * the `avatar` of a `dh-avatar` video, listed by `GET /v1/videos/avatars/presets`.
 * Ids start with `preset_`, which no created avatar id does.
 */
export interface AvatarPreset {
  id: string;
  name: string;
}

export const AVATAR_PRESETS: readonly AvatarPreset[] = [
  { id: 'preset_anna', name: 'Anna' },
  { id: 'preset_ben', name: 'Ben' },
  { id: 'preset_chen', name: 'Chen' },
  { id: 'preset_dana', name: 'Dana' },
  { id: 'preset_emma', name: 'Emma' },
  { id: 'preset_lei', name: 'Lei' },
];

export const PRESET_AVATAR_IDS: ReadonlySet<string> = new Set(AVATAR_PRESETS.map((a) => a.id));

export function isPresetAvatar(id: string): boolean {
  return PRESET_AVATAR_IDS.has(id);
}
