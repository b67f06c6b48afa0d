import { hash32 } from './bytes';

/** Deterministic spoken text for a video link: about 4 Chinese characters or 2.5 English words a second. */

const ZH = [
  '大家好，今天给大家分享一个非常实用的小技巧。',
  '很多人都不知道，其实只要三步就能搞定。',
  '第一步，先把材料准备好，放在手边。',
  '第二步，按照顺序慢慢操作，不要着急。',
  '最后记得检查一遍，确认没有遗漏。',
  '如果觉得有用，记得点赞收藏，我们下期再见。',
];

const EN = [
  'Hi everyone, today I want to share a simple trick that saves a lot of time.',
  'Most people never notice it, but it only takes three steps.',
  'First, get everything you need ready and within reach.',
  'Second, work through it in order and do not rush.',
  'Finally, check everything once more before you finish.',
  'If this helped, like and follow, and see you next time.',
];

export function transcriptFor(url: string, seconds: number, language: 'zh' | 'en'): Record<string, unknown> {
  const lines = language === 'zh' ? ZH : EN;
  const perSecond = language === 'zh' ? 4 : 12.5; // characters
  const target = Math.max(1, Math.round(seconds * perSecond));
  const start = hash32(url) % lines.length;
  const parts: string[] = [];
  let len = 0;
  for (let i = 0; len < target; i++) {
    const line = lines[(start + i) % lines.length];
    parts.push(line);
    len += line.length;
  }
  const step = seconds / parts.length;
  const segments = parts.map((text, i) => ({ start: Number((i * step).toFixed(2)), end: Number(((i + 1) * step).toFixed(2)), text }));
  return { text: parts.join(language === 'zh' ? '' : ' '), language, duration_seconds: seconds, segments };
}
