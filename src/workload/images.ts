/**
 * Synthetic images for multimodal chat (`--images N --image-size WxH`): random-noise RGB PNGs made locally from the
 * seed, the request index and the image's place in the request. Every request gets different pixels, so a server's
 * image (encoder) cache never hits — what vLLM bench and GuideLLM send too — and the same seed sends the same images.
 *
 * Cheap on purpose: noise does not compress, so the pixels are stored (deflate level 0, which only frames them and
 * adds the Adler-32) and the CRCs come from zlib.crc32; the image of the next request is made while this one is in
 * flight (withImages), never between a request's scheduled time and its send.
 */
import { configError } from '../core/errors.js';
import { crc32, deflateSync } from 'node:zlib';
import { isConversationWorkload } from './conversation.js';
import { mix, Stream } from './seeding.js';
import type { WorkItem, Workload } from './types.js';

/** What `--images N --image-size WxH` asks for. */
export interface ImageSpec {
  /** Images per request. */
  count: number;
  width: number;
  height: number;
}

/** `--image-size` when only `--images` is given (vLLM bench's and GuideLLM's common default). */
export const DEFAULT_IMAGE_SIZE = { width: 512, height: 512 } as const;

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Writes one chunk (length, type, data, CRC of type and data) at `at`; returns the offset after it. */
function putChunk(out: Buffer, at: number, type: string, data: Uint8Array): number {
  out.writeUInt32BE(data.length, at);
  out.write(type, at + 4, 'latin1');
  out.set(data, at + 8);
  out.writeUInt32BE(crc32(out.subarray(at + 4, at + 8 + data.length)) >>> 0, at + 8 + data.length);
  return at + 12 + data.length;
}

/**
 * A width × height 8-bit RGB PNG of noise drawn from `seed` (xorshift128, four bytes at a time). Each scanline
 * starts with filter byte 0 (none), so any decoder reads the bytes back as they were drawn.
 */
export function noisePng(width: number, height: number, seed: number): Buffer {
  const stride = 1 + 3 * width;
  const size = stride * height;
  const raw = Buffer.alloc(Math.ceil(size / 4) * 4);
  const words = new Uint32Array(raw.buffer, raw.byteOffset, raw.length / 4);
  let a = mix(seed, 1) | 1;
  let b = mix(seed, 2);
  let c = mix(seed, 3);
  let d = mix(seed, 4);
  for (let i = 0; i < words.length; i++) {
    const t = a ^ (a << 11);
    a = b;
    b = c;
    c = d;
    d = d ^ (d >>> 19) ^ t ^ (t >>> 8);
    words[i] = d;
  }
  for (let row = 0; row < height; row++) raw[row * stride] = 0;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour (RGB)
  // compression 0, filter 0, interlace 0 are the zeros already there
  const idat = deflateSync(raw.subarray(0, size), { level: 0 });
  const out = Buffer.allocUnsafe(SIGNATURE.length + 3 * 12 + ihdr.length + idat.length);
  out.set(SIGNATURE, 0);
  let at = putChunk(out, SIGNATURE.length, 'IHDR', ihdr);
  at = putChunk(out, at, 'IDAT', idat);
  putChunk(out, at, 'IEND', new Uint8Array(0));
  return out;
}

/** Image `k` of request `index` as a data URL (what OpenAI-style `image_url` parts carry). */
export function imageDataUrl(spec: ImageSpec, seed: number, index: number, k: number): string {
  return 'data:image/png;base64,' + noisePng(spec.width, spec.height, mix(seed, Stream.image, index, k)).toString('base64');
}

/** The `count` data URLs of request `index`. */
export function requestImages(spec: ImageSpec, seed: number, index: number): string[] {
  return Array.from({ length: spec.count }, (_, k) => imageDataUrl(spec, seed, index, k));
}

/** Memory the images made ahead may hold (a few requests' worth; the oldest go first). */
const CACHE_BYTES = 64 * 1024 * 1024;

/**
 * The same workload with `spec.count` images on every request (WorkItem.images). Items are built when the driver
 * launches a request, so the images of the next index (the last step between two launches: 1, or N for a shard) are
 * made on the next turn of the event loop after a launch, while requests are in flight rather than at a send; the
 * first few indexes are made when the workload is, before the first row. Images are a pure function of (seed, index),
 * so a cached one is exactly the one that would be made.
 */
export function withImages(source: Workload, spec: ImageSpec, seed: number): Workload {
  if (isConversationWorkload(source)) {
    throw configError('--images does not go with multi-turn conversations (--turns, session traces) yet', 'drop --images, or benchmark single-turn requests');
  }
  // base64 of the raw scanlines (deflate level 0 adds ~0.01%) per request
  const requestBytes = spec.count * Math.ceil(((3 * spec.width + 1) * spec.height * 4) / 3);
  const keep = Math.max(2, Math.min(16, Math.floor(CACHE_BYTES / requestBytes)));
  const cache = new Map<number, string[]>();
  const get = (index: number): string[] => {
    let images = cache.get(index);
    if (!images) {
      images = requestImages(spec, seed, index);
      cache.set(index, images);
      if (cache.size > keep) cache.delete(cache.keys().next().value as number);
    }
    return images;
  };
  const ahead = (indexes: number[]): void => {
    setImmediate(() => {
      for (const i of indexes) get(i);
    });
  };
  ahead(Array.from({ length: Math.min(keep, 4) }, (_, i) => i));
  let last: number | undefined;
  const per = `${spec.count} image${spec.count === 1 ? '' : 's'} of ${spec.width}x${spec.height} per request`;
  const w: Workload = {
    description: `${source.description}, ${per}`,
    item(index: number): WorkItem {
      const images = get(index);
      const step = last !== undefined && index > last ? index - last : 1;
      last = index;
      ahead([index + step]);
      return { ...source.item(index), images };
    },
  };
  if (source.size !== undefined) Object.assign(w, { size: source.size });
  if (source.sharesPrefixes) Object.assign(w, { sharesPrefixes: true });
  return w;
}
