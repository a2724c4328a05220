/**
 * Images in chat requests, for the simulated vision-language models: where they sit in a body (OpenAI `image_url`
 * parts, Ollama's `images` lists), their size (PNG IHDR, JPEG SOF; read from the first bytes only, nothing is
 * decoded), and the prompt tokens and vision-encoder work each takes under the model's own processor rules.
 */
import type { VisionSpec } from '../catalog/types.js';
import type { SimEngineKind } from './types.js';

/** What a request's images add: prompt tokens, and the vision encoder's FLOPs (~2 per parameter per patch). */
export interface ImageUse {
  images: number;
  tokens: number;
  encoderFlops: number;
}

export type ImageRead = { ok: true; use?: ImageUse } | { ok: false; message: string };

/**
 * Image tokens of one request, noted on the parsed body's `messages` array (chat) or on the body itself (Ollama
 * /api/generate): the engines' prompt counting (filler.ts countChat, ollama.ts) adds them, so usage and the prefill
 * charge them like the chat template's tokens, without every engine's handler knowing about images.
 */
const noted = new WeakMap<object, number>();

export function imageTokensOf(carrier: unknown): number {
  return typeof carrier === 'object' && carrier !== null ? (noted.get(carrier) ?? 0) : 0;
}

/** One image as sent: a data URL, a remote URL, or bare base64 (Ollama). */
type ImageRef = { kind: 'data'; base64: string } | { kind: 'remote'; url: string };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function refOf(url: string): ImageRef {
  if (/^https?:\/\//i.test(url)) return { kind: 'remote', url };
  const comma = url.indexOf(',');
  return { kind: 'data', base64: url.startsWith('data:') && comma >= 0 ? url.slice(comma + 1) : url };
}

/** Images of a message's content parts (`image_url` as an object or a string, Responses-style `input_image`). */
function partImages(content: unknown, out: ImageRef[]): void {
  if (!Array.isArray(content)) return;
  for (const part of content) {
    if (!isObj(part)) continue;
    const v = part['type'] === 'image_url' ? part['image_url'] : part['type'] === 'input_image' ? part['image_url'] : undefined;
    const url = isObj(v) ? v['url'] : v;
    if (typeof url === 'string') out.push(refOf(url));
  }
}

/** Every image of a body, and where its count is to be noted. */
function findImages(body: unknown): { refs: ImageRef[]; carrier: object } | undefined {
  if (!isObj(body)) return undefined;
  const refs: ImageRef[] = [];
  const messages = body['messages'];
  if (Array.isArray(messages)) {
    for (const m of messages) {
      if (!isObj(m)) continue;
      partImages(m['content'], refs);
      const list = m['images'];
      if (Array.isArray(list)) for (const b of list) if (typeof b === 'string') refs.push(refOf(b));
    }
    return refs.length > 0 ? { refs, carrier: messages } : undefined;
  }
  const list = body['images'];
  if (Array.isArray(list)) for (const b of list) if (typeof b === 'string') refs.push(refOf(b));
  return refs.length > 0 ? { refs, carrier: body } : undefined;
}

/** Width and height from the first bytes of a PNG or JPEG; undefined for anything else. */
export function imageSize(base64: string): { width: number; height: number } | undefined {
  const head = Buffer.from(base64.slice(0, 32), 'base64');
  if (head.length >= 24 && head.readUInt32BE(0) === 0x89504e47 && head.toString('latin1', 12, 16) === 'IHDR') {
    return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
  }
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xd8) return jpegSize(Buffer.from(base64.slice(0, 87384), 'base64'));
  return undefined;
}

/** The frame header (SOF0–SOF15 but DHT, JPG, DAC) of a JPEG's first 64 KiB. */
function jpegSize(b: Buffer): { width: number; height: number } | undefined {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1] as number;
    if (marker === 0xff) {
      i++;
      continue;
    }
    const len = b.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
    }
    i += 2 + len;
  }
  return undefined;
}

/** Python's round(): halves go to the even neighbour (Qwen's round_by_factor uses it). */
function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** Qwen2-VL's smart_resize: both sides multiples of patch·merge, pixels within [min, max], aspect ratio kept. */
export function qwenResize(height: number, width: number, v: Extract<VisionSpec, { kind: 'qwen2-vl' }>): { height: number; width: number } | string {
  const f = v.patchSize * v.mergeSize;
  if (height < 10 || width < 10) return `height:${height} or width:${width} must be larger than factor:${f}`;
  if (Math.max(height, width) / Math.min(height, width) > 200) return `absolute aspect ratio must be smaller than 200, got ${Math.max(height, width) / Math.min(height, width)}`;
  let h = Math.max(f, roundHalfEven(height / f) * f);
  let w = Math.max(f, roundHalfEven(width / f) * f);
  if (h * w > v.maxPixels) {
    const beta = Math.sqrt((height * width) / v.maxPixels);
    h = Math.max(f, Math.floor(height / beta / f) * f);
    w = Math.max(f, Math.floor(width / beta / f) * f);
  } else if (h * w < v.minPixels) {
    const beta = Math.sqrt(v.minPixels / (height * width));
    h = Math.ceil((height * beta) / f) * f;
    w = Math.ceil((width * beta) / f) * f;
  }
  return { height: h, width: w };
}

/** HF select_best_resolution: the grid that keeps the most of the image's resolution, then wastes the least. */
function bestResolution(height: number, width: number, pinpoints: ReadonlyArray<readonly [number, number]>): readonly [number, number] {
  let best: readonly [number, number] = pinpoints[0] ?? [height, width];
  let maxEffective = 0;
  let minWasted = Infinity;
  for (const [h, w] of pinpoints) {
    const scale = Math.min(w / width, h / height);
    const effective = Math.min(Math.trunc(width * scale) * Math.trunc(height * scale), width * height);
    const wasted = w * h - effective;
    if (effective > maxEffective || (effective === maxEffective && wasted < minWasted)) {
      maxEffective = effective;
      minWasted = wasted;
      best = [h, w];
    }
  }
  return best;
}

/** Prompt tokens and encoder patches of one image, or why the model's processor refuses it. */
export function imageCost(v: VisionSpec, width: number, height: number): { tokens: number; patches: number } | string {
  switch (v.kind) {
    case 'fixed':
      return { tokens: v.tokens + v.extraTokens, patches: v.patches };
    case 'qwen2-vl': {
      const r = qwenResize(height, width, v);
      if (typeof r === 'string') return r;
      const merged = v.patchSize * v.mergeSize;
      return { tokens: (r.height / merged) * (r.width / merged) + v.extraTokens, patches: (r.height / v.patchSize) * (r.width / v.patchSize) };
    }
    case 'llava-next': {
      // HF LlavaNextProcessor._get_number_of_features with the "default" feature strategy (CLS dropped).
      const side = v.crop / v.patchSize;
      const [bh, bw] = bestResolution(height, width, v.pinpoints);
      const scaleH = Math.floor(bh / v.crop);
      const scaleW = Math.floor(bw / v.crop);
      let curH = side * scaleH;
      let curW = side * scaleW;
      if (width / height > curW / curH) {
        const newH = Math.trunc(Math.round(height * (curW / width) * 1e7) / 1e7);
        curH -= Math.floor((curH - newH) / 2) * 2;
      } else {
        const newW = Math.trunc(Math.round(width * (curH / height) * 1e7) / 1e7);
        curW -= Math.floor((curW - newW) / 2) * 2;
      }
      return { tokens: curH * curW + curH + side * side, patches: (1 + scaleH * scaleW) * (side * side + 1) };
    }
  }
}

/** The engine's answer to an image for a text-only model (each engine's own words where known). */
function textOnlyMessage(engine: SimEngineKind, model: string): string {
  if (engine === 'vllm' || engine === 'vllm-legacy') return `${model} is not a multimodal model`;
  if (engine === 'ollama') return 'this model is missing data required for image input';
  return `${model} does not take image inputs (a text-only model)`;
}

/**
 * Reads the images of a request body for a model with `vision` (undefined: a text-only model) and notes their tokens
 * for the prompt count. No images: `{ ok: true }` and nothing noted. A problem is one line for the engine's 400.
 */
export function readImages(body: unknown, model: string, vision: VisionSpec | undefined, engine: SimEngineKind): ImageRead {
  const found = findImages(body);
  if (!found) return { ok: true };
  if (!vision) return { ok: false, message: textOnlyMessage(engine, model) };
  let tokens = 0;
  let patches = 0;
  for (const ref of found.refs) {
    // The simulator has no network: a URL it would have to download fails as a fetch that failed.
    if (ref.kind === 'remote') return { ok: false, message: `cannot fetch image from ${ref.url}: the simulated server has no network access (send the image inline as a data: URL)` };
    const size = imageSize(ref.base64);
    if (!size) return { ok: false, message: 'cannot identify image file (the simulated server reads PNG and JPEG)' };
    const cost = imageCost(vision, size.width, size.height);
    if (typeof cost === 'string') return { ok: false, message: cost };
    tokens += cost.tokens;
    patches += cost.patches;
  }
  noted.set(found.carrier, tokens);
  return { ok: true, use: { images: found.refs.length, tokens, encoderFlops: 2 * vision.encoderParams * patches } };
}
