/** MiniMax system voices the simulator knows (a subset of the published list). */
export const SYSTEM_VOICES: Array<{ voice_id: string; voice_name: string; description: string[] }> = [
  { voice_id: 'male-qn-qingse', voice_name: '青涩青年音色', description: ['Youthful male voice, fresh and gentle'] },
  { voice_id: 'male-qn-jingying', voice_name: '精英青年音色', description: ['Confident young professional male voice'] },
  { voice_id: 'female-shaonv', voice_name: '少女音色', description: ['Bright young female voice'] },
  { voice_id: 'female-yujie', voice_name: '御姐音色', description: ['Mature, composed female voice'] },
  { voice_id: 'female-tianmei', voice_name: '甜美女性音色', description: ['Sweet female voice'] },
  { voice_id: 'presenter_male', voice_name: '男性主持人', description: ['Male presenter'] },
  { voice_id: 'presenter_female', voice_name: '女性主持人', description: ['Female presenter'] },
  { voice_id: 'audiobook_male_1', voice_name: '男性有声书1', description: ['Male audiobook narrator'] },
  { voice_id: 'English_Graceful_Lady', voice_name: 'Graceful Lady', description: ['Elegant English female voice'] },
  { voice_id: 'English_Trustworth_Man', voice_name: 'Trustworthy Man', description: ['Steady English male voice'] },
];

/** MiniMax voice_id rule: 8-256 chars, starts with a letter, letters/digits/-/_, not ending in - or _. */
export const VOICE_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{6,254}[A-Za-z0-9]$/;
