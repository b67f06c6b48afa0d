/**
 * Clip-editing templates by scene. `has_title` / `has_persona` follow from
 * the layers: a template without a title layer ignores the title input.
 */

export const CLIP_SCENES = ['virtualman', 'realMan', 'oralMixCutting', 'newsMixCutting'] as const;
export type ClipScene = (typeof CLIP_SCENES)[number];

export interface TemplateLayer {
  id: string;
  type: 'video' | 'image' | 'text' | 'subtitle' | 'persona' | 'audio';
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
  z_index: number;
  editable: boolean;
  source: 'material' | 'source_video' | 'persona' | 'title' | 'speech' | 'bgm' | 'decoration';
  style?: { font_family: string; font_size: number; color: string; stroke_color?: string; align: 'left' | 'center' | 'right' };
}

export interface ClipTemplate {
  id: string;
  scene: ClipScene;
  title: string;
  description: string;
  has_title: boolean;
  has_persona: boolean;
  duration_range: { min_seconds: number; max_seconds: number };
  canvas: { width: number; height: number; fps: number; background_color: string };
  layers: TemplateLayer[];
}

const W = 1080;
const H = 1920;

function titleLayer(y = 180): TemplateLayer {
  return {
    id: 'title', type: 'text', name: 'Headline', x: 60, y, width: W - 120, height: 160, z_index: 40, editable: true, source: 'title',
    style: { font_family: 'Source Han Sans SC Heavy', font_size: 72, color: '#FFFFFF', stroke_color: '#E02020', align: 'center' },
  };
}

function subtitleLayer(y = 1500): TemplateLayer {
  return {
    id: 'subtitle', type: 'subtitle', name: 'Auto subtitles', x: 80, y, width: W - 160, height: 120, z_index: 30, editable: false, source: 'speech',
    style: { font_family: 'Source Han Sans SC Bold', font_size: 52, color: '#FFFFFF', stroke_color: '#000000', align: 'center' },
  };
}

function personaLayer(x: number, y: number, w: number, h: number): TemplateLayer {
  return { id: 'persona', type: 'persona', name: 'Presenter', x, y, width: w, height: h, z_index: 20, editable: true, source: 'persona' };
}

const bgm: TemplateLayer = { id: 'bgm', type: 'audio', name: 'Background music', x: 0, y: 0, width: 0, height: 0, z_index: 0, editable: true, source: 'bgm' };

function template(id: string, scene: ClipScene, title: string, description: string, layers: TemplateLayer[], range: [number, number]): ClipTemplate {
  return {
    id, scene, title, description,
    has_title: layers.some((l) => l.source === 'title'),
    has_persona: layers.some((l) => l.type === 'persona'),
    duration_range: { min_seconds: range[0], max_seconds: range[1] },
    canvas: { width: W, height: H, fps: 25, background_color: '#101014' },
    layers: [...layers].sort((a, b) => a.z_index - b.z_index),
  };
}

export const CLIP_TEMPLATES: ClipTemplate[] = [
  template('tpl_vm_studio_01', 'virtualman', 'Studio presenter', 'Digital presenter in front of a branded studio wall, headline on top.', [
    { id: 'background', type: 'image', name: 'Studio wall', x: 0, y: 0, width: W, height: H, z_index: 1, editable: true, source: 'decoration' },
    personaLayer(140, 520, 800, 1400), titleLayer(), subtitleLayer(), bgm,
  ], [5, 300]),
  template('tpl_vm_split_02', 'virtualman', 'Split screen explainer', 'Presenter bottom-left, materials in the upper panel.', [
    { id: 'materials', type: 'video', name: 'Material panel', x: 0, y: 0, width: W, height: 1080, z_index: 5, editable: true, source: 'material' },
    personaLayer(0, 1080, 540, 840), subtitleLayer(1700), bgm,
  ], [5, 300]),
  template('tpl_rm_vlog_01', 'realMan', 'Talking-head vlog', 'The source video full screen with a title bar and subtitles.', [
    { id: 'source', type: 'video', name: 'Source video', x: 0, y: 0, width: W, height: H, z_index: 1, editable: false, source: 'source_video' },
    titleLayer(120), subtitleLayer(), bgm,
  ], [5, 300]),
  template('tpl_rm_clean_02', 'realMan', 'Clean cut', 'Pauses and filler removed; subtitles only, no title.', [
    { id: 'source', type: 'video', name: 'Source video', x: 0, y: 0, width: W, height: H, z_index: 1, editable: false, source: 'source_video' },
    subtitleLayer(),
  ], [5, 300]),
  template('tpl_mix_product_01', 'oralMixCutting', 'Product voice-over', 'Materials cut to the narration, title and subtitles.', [
    { id: 'materials', type: 'video', name: 'Material track', x: 0, y: 0, width: W, height: H, z_index: 1, editable: true, source: 'material' },
    titleLayer(), subtitleLayer(), bgm,
  ], [5, 300]),
  template('tpl_mix_story_02', 'oralMixCutting', 'Story with presenter', 'Materials behind a small presenter window.', [
    { id: 'materials', type: 'video', name: 'Material track', x: 0, y: 0, width: W, height: H, z_index: 1, editable: true, source: 'material' },
    personaLayer(700, 1300, 340, 560), subtitleLayer(1150), bgm,
  ], [5, 300]),
  template('tpl_news_flash_01', 'newsMixCutting', 'News flash', 'Breaking-news frame with lower third and ticker.', [
    { id: 'materials', type: 'video', name: 'Footage', x: 0, y: 300, width: W, height: 1080, z_index: 1, editable: true, source: 'material' },
    { id: 'frame', type: 'image', name: 'News frame', x: 0, y: 0, width: W, height: H, z_index: 10, editable: false, source: 'decoration' },
    titleLayer(1420), subtitleLayer(1620), bgm,
  ], [5, 300]),
  template('tpl_news_anchor_02', 'newsMixCutting', 'Anchor desk', 'Virtual anchor beside the footage window.', [
    { id: 'materials', type: 'video', name: 'Footage', x: 60, y: 260, width: 960, height: 540, z_index: 5, editable: true, source: 'material' },
    personaLayer(240, 860, 600, 1060), titleLayer(120), subtitleLayer(), bgm,
  ], [5, 300]),
];

export function findTemplate(id: string): ClipTemplate | undefined {
  return CLIP_TEMPLATES.find((t) => t.id === id);
}

/** Which scene each clip model's `style_id` must come from. */
export const SCENE_FOR_VARIANT: Record<'realman' | 'mixcut' | 'news', ClipScene[]> = {
  realman: ['realMan', 'virtualman'],
  mixcut: ['oralMixCutting', 'virtualman'],
  news: ['newsMixCutting'],
};
