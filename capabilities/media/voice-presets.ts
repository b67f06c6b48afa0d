/**
 * Platform preset voices (MiniMax system voices the platform offers): usable
 * by every key as `voice_id` of speech and as `voice` of a dh-avatar video,
 * listed by `GET /v1/audio/voices` under `presets`.
 */
export interface VoicePreset {
  voice_id: string;
  name: string;
  language: string;
  description: string;
}

export const VOICE_PRESETS: readonly VoicePreset[] = [
  { voice_id: 'male-qn-qingse', name: '青涩青年音色', language: 'zh', description: 'Youthful male voice, fresh and gentle' },
  { voice_id: 'male-qn-jingying', name: '精英青年音色', language: 'zh', description: 'Confident young professional male voice' },
  { voice_id: 'female-shaonv', name: '少女音色', language: 'zh', description: 'Bright young female voice' },
  { voice_id: 'female-yujie', name: '御姐音色', language: 'zh', description: 'Mature, composed female voice' },
  { voice_id: 'female-tianmei', name: '甜美女性音色', language: 'zh', description: 'Sweet female voice' },
  { voice_id: 'presenter_male', name: '男性主持人', language: 'zh', description: 'Male presenter' },
  { voice_id: 'presenter_female', name: '女性主持人', language: 'zh', description: 'Female presenter' },
  { voice_id: 'audiobook_male_1', name: '男性有声书1', language: 'zh', description: 'Male audiobook narrator' },
  { voice_id: 'English_Graceful_Lady', name: 'Graceful Lady', language: 'en', description: 'Elegant English female voice' },
  { voice_id: 'English_Trustworth_Man', name: 'Trustworthy Man', language: 'en', description: 'Steady English male voice' },
];

const IDS: ReadonlySet<string> = new Set(VOICE_PRESETS.map((v) => v.voice_id));

export function isPresetVoice(id: string): boolean {
  return IDS.has(id);
}
