import { deflateSync } from 'node:zlib';

/** Tiny but valid result payloads: PNG images, MP4 and MP3 byte blobs. */

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** FNV-1a hash, used to derive colours, seeds and lengths from ids. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** An 8x8 RGB PNG in one colour chosen from `seed`. */
export function makePng(seed: string, side = 8): Buffer {
  const h = hash32(seed);
  const rgb = [h & 0xff, (h >>> 8) & 0xff, (h >>> 16) & 0xff];
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  ihdr[10] = 0;
  ihdr[11] = 0;
  ihdr[12] = 0;
  const row = Buffer.alloc(1 + side * 3);
  for (let x = 0; x < side; x++) row.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: side }, () => row));
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

function box(type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + payload.length, 0);
  head.write(type, 4, 'ascii');
  return Buffer.concat([head, payload]);
}

/** An ISO-BMFF shaped blob (ftyp + free + mdat); not playable, right magic bytes. */
export function makeMp4(seed: string, seconds: number): Buffer {
  const ftyp = box('ftyp', Buffer.concat([Buffer.from('isom', 'ascii'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2avc1mp41', 'ascii')]));
  const free = box('free', Buffer.from(`simulator ${seed} duration=${seconds}s`, 'utf8'));
  const mdat = box('mdat', Buffer.alloc(256, hash32(seed) & 0xff));
  return Buffer.concat([ftyp, free, mdat]);
}

/** An ID3v2 header followed by silent MPEG-1 Layer III frames, one per ~26 ms up to 2 s. */
export function makeMp3(seed: string, seconds: number): Buffer {
  const id3 = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
  const frame = Buffer.alloc(417); // 128 kbps, 44.1 kHz frame length
  frame.writeUInt32BE(0xfffb9064, 0);
  const frames = Math.max(1, Math.min(76, Math.round(seconds * 38.28)));
  const tag = Buffer.from(`simulator ${seed}`, 'utf8');
  return Buffer.concat([id3, ...Array.from({ length: frames }, () => frame), tag]);
}

export function contentTypeFor(name: string): string {
  if (name.endsWith('.png')) return 'image/png';
  if (name.endsWith('.jpg') || name.endsWith('.jpeg')) return 'image/jpeg';
  if (name.endsWith('.mp4')) return 'video/mp4';
  if (name.endsWith('.mp3')) return 'audio/mpeg';
  if (name.endsWith('.wav')) return 'audio/wav';
  return 'application/octet-stream';
}
