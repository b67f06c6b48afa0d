import type { Model } from '../catalogue';
import { parseCredits, type Nano } from '../money';

/**
 * Media prices (spec 2): images per image (pixel-area tiers, per reference
 * image), video and digital humans per second (per tier where the catalogue
 * says so), music per request of two songs, speech per character, avatars
 * and voice clones per creation, transcripts per request. A reservation is
 * the worst case; settlement charges what was produced.
 */
export type UnitType = 'image' | 'second' | 'song' | 'character' | 'creation' | 'request';

export interface MediaQuote {
  unitType: UnitType;
  /** Nano per unit. */
  unitNano: Nano;
  /** Fixed part that does not depend on the output (reference images). */
  fixedNano: Nano;
  /** Units reserved at submission. */
  reservedUnits: number;
}

export function reservationNano(q: MediaQuote): Nano {
  return q.fixedNano + q.unitNano * q.reservedUnits;
}

/**
 * What a finished task costs: the fixed part plus actual units. Zero output costs nothing.
 * Seconds are charged as produced, above the reservation too (spec 2 sections 3 and 4.4: video settles by
 * actual seconds and a digital human's `duration` "is only the reservation and the charge is the actual
 * seconds"; section 4.8: the shortfall is charged, and settlement has no balance gate, spec 1 section 8).
 * Other units never pass the reservation's: images, songs and characters are bounded by the request.
 */
export function settlementNano(q: MediaQuote, actualUnits: number): Nano {
  const units = Math.max(0, q.unitType === 'second' ? actualUnits : Math.min(actualUnits, q.reservedUnits));
  if (units === 0) return 0;
  return q.fixedNano + q.unitNano * units;
}

const price = (v: number | undefined, what: string, model: Model): Nano => {
  if (v === undefined) throw new Error(`catalogue: model ${model.id} has no ${what} price`);
  return parseCredits(v);
};

/** Pixel area of `WxH`, or undefined when it is not in that form. */
export function pixelArea(size: string | undefined): number | undefined {
  const m = size ? /^(\d{2,5})x(\d{2,5})$/.exec(size) : null;
  return m ? Number(m[1]) * Number(m[2]) : undefined;
}

export function imageQuote(model: Model, opts: { n: number; size?: string; referenceImages: number }): MediaQuote {
  const p = model.pricing;
  const grid = typeof model.media?.grid === 'number' ? (model.media.grid as number) : 0;
  let unit: Nano;
  if (p.per_image_tiers) {
    // An omitted size means the default 2048x2048, which is the higher tier.
    const area = pixelArea(opts.size ?? String(model.media?.default_size ?? '2048x2048')) ?? Infinity;
    unit = parseCredits(area > p.per_image_tiers.threshold_pixels ? p.per_image_tiers.high : p.per_image_tiers.low);
  } else {
    unit = price(p.per_image, 'per_image', model);
  }
  const fixed = p.per_reference_image ? parseCredits(p.per_reference_image) * opts.referenceImages : 0;
  return { unitType: 'image', unitNano: unit, fixedNano: fixed, reservedUnits: grid ? Math.max(opts.n, grid) : opts.n };
}

export function secondsQuote(model: Model, opts: { seconds: number; tier?: string }): MediaQuote {
  const p = model.pricing;
  let unit: Nano;
  if (p.per_second_by_tier) {
    const tier = opts.tier ?? 'standard';
    const v = p.per_second_by_tier[tier];
    if (v === undefined) throw new Error(`catalogue: model ${model.id} has no price for tier ${tier}`);
    unit = parseCredits(v);
  } else {
    unit = price(p.per_second, 'per_second', model);
  }
  return { unitType: 'second', unitNano: unit, fixedNano: 0, reservedUnits: Math.ceil(opts.seconds) };
}

/** Music: one request gives `songs` songs; a request that yields fewer is charged pro rata. */
export function musicQuote(model: Model): MediaQuote {
  const songs = typeof model.media?.songs === 'number' ? (model.media.songs as number) : 2;
  const perRequest = price(model.pricing.per_request, 'per_request', model);
  return { unitType: 'song', unitNano: Math.round(perRequest / songs), fixedNano: 0, reservedUnits: songs };
}

export function characterQuote(model: Model, characters: number): MediaQuote {
  return { unitType: 'character', unitNano: price(model.pricing.per_character, 'per_character', model), fixedNano: 0, reservedUnits: characters };
}

export function creationQuote(model: Model): MediaQuote {
  return { unitType: 'creation', unitNano: price(model.pricing.per_creation, 'per_creation', model), fixedNano: 0, reservedUnits: 1 };
}

export function requestQuote(model: Model): MediaQuote {
  return { unitType: 'request', unitNano: price(model.pricing.per_request, 'per_request', model), fixedNano: 0, reservedUnits: 1 };
}
