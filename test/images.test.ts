import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { resolveRunOptions, type RawRunFlags } from '../src/config/run-options.js';
import { imageApiFor } from '../src/config/image-options.js';
import { ollama } from '../src/dialects/ollama.js';
import { openaiChat } from '../src/dialects/openai-chat.js';
import type { GenerationRequest } from '../src/dialects/types.js';
import { findModel } from '../src/sim/catalog/index.js';
import type { VisionSpec } from '../src/sim/catalog/types.js';
import { imageCost, imageSize, imageTokensOf, readImages } from '../src/sim/wire/vision.js';
import { countChat } from '../src/sim/wire/filler.js';
import { imageDataUrl, noisePng, requestImages, withImages } from '../src/workload/images.js';
import type { Workload } from '../src/workload/types.js';

/** CRC-32 (IEEE) bit by bit, independent of zlib's, to check the PNG's chunk CRCs. */
function crc(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** The chunks of a PNG, each CRC checked. */
function chunks(png: Buffer): Array<{ type: string; data: Buffer }> {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const out: Array<{ type: string; data: Buffer }> = [];
  for (let i = 8; i < png.length; ) {
    const len = png.readUInt32BE(i);
    const type = png.toString('latin1', i + 4, i + 8);
    const data = png.subarray(i + 8, i + 8 + len);
    expect(png.readUInt32BE(i + 8 + len), `${type} CRC`).toBe(crc(png.subarray(i + 4, i + 8 + len)));
    out.push({ type, data });
    i += 12 + len;
  }
  return out;
}

describe('synthetic images (workload/images.ts)', () => {
  it('are valid RGB PNGs of the asked size: chunk CRCs, a zlib stream of unfiltered scanlines', () => {
    const png = noisePng(37, 21, 5);
    const cs = chunks(png);
    expect(cs.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    const ihdr = cs[0]?.data as Buffer;
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9], ihdr[10], ihdr[11], ihdr[12]]).toEqual([37, 21, 8, 2, 0, 0, 0]);
    const raw = inflateSync(cs[1]?.data as Buffer);
    expect(raw.length).toBe(21 * (1 + 3 * 37));
    for (let row = 0; row < 21; row++) expect(raw[row * (1 + 3 * 37)]).toBe(0);
    // Noise: the pixel bytes take most values (a constant or striped image would not).
    expect(new Set(raw).size).toBeGreaterThan(200);
  });

  it('are the same for the same seed and index, different for another request, image or seed', () => {
    const spec = { count: 2, width: 64, height: 48 };
    const a = requestImages(spec, 42, 7);
    expect(a).toEqual(requestImages(spec, 42, 7));
    expect(a[0]).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(a[0]).not.toBe(a[1]);
    expect(a[0]).not.toBe(imageDataUrl(spec, 42, 8, 0));
    expect(a[0]).not.toBe(imageDataUrl(spec, 43, 7, 0));
  });

  it('withImages puts them on every item and makes the next index ahead, with the same result as on demand', async () => {
    const base: Workload = { description: 'text', item: (i) => ({ prompt: `p${i}`, promptTokens: 5, promptTokenSource: 'client-tokenizer', outputTokens: 3 }) };
    const spec = { count: 1, width: 32, height: 32 };
    const w = withImages(base, spec, 9);
    expect(w.description).toBe('text, 1 image of 32x32 per request');
    const first = w.item(0);
    expect(first).toMatchObject({ prompt: 'p0', promptTokens: 5, images: requestImages(spec, 9, 0) });
    await new Promise((r) => setImmediate(r));
    expect(w.item(1).images).toEqual(requestImages(spec, 9, 1));
    // A shard's indexes step by N: the step is learned from the last two.
    await new Promise((r) => setImmediate(r));
    expect(w.item(4).images).toEqual(requestImages(spec, 9, 4));
  });
});

describe('dialects put images in the request body', () => {
  const images = requestImages({ count: 2, width: 16, height: 8 }, 1, 0);
  const req: GenerationRequest = { model: 'm', prompt: 'describe', maxTokens: 8, forceLength: false, stream: true, images };

  it('openai-chat: image_url parts after the text of the last user message', () => {
    const plan = openaiChat.buildRequest({ ...req, messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'describe' }] });
    const body = JSON.parse(plan.body) as { messages: unknown[] };
    expect(plan.path).toBe('/v1/chat/completions');
    expect(body.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'describe' }, { type: 'image_url', image_url: { url: images[0] } }, { type: 'image_url', image_url: { url: images[1] } }] },
    ]);
    // The byte count the transport sends as content-length, known without scanning the images (é is two bytes).
    const accented = openaiChat.buildRequest({ ...req, prompt: 'décris' });
    expect(accented.contentLength).toBe(Buffer.byteLength(accented.body));
    expect(ollama.buildRequest({ ...req, prompt: 'décris' }).contentLength).toBe(Buffer.byteLength(ollama.buildRequest({ ...req, prompt: 'décris' }).body));
    // Without images the body is as before: plain string content.
    expect(JSON.parse(openaiChat.buildRequest({ ...req, images: [] }).body).messages).toEqual([{ role: 'user', content: 'describe' }]);
  });

  it('ollama: /api/chat with the bare base64 in the message, /api/generate raw without images', () => {
    const plan = ollama.buildRequest(req);
    expect(plan.path).toBe('/api/chat');
    const body = JSON.parse(plan.body) as { messages: Array<{ role: string; content: string; images: string[] }>; options: unknown };
    expect(body.messages).toEqual([{ role: 'user', content: 'describe', images: images.map((u) => u.replace('data:image/png;base64,', '')) }]);
    expect(body.options).toEqual({ num_predict: 8 });
    const text = ollama.buildRequest({ ...req, images: undefined } as GenerationRequest);
    expect(text.path).toBe('/api/generate');
    expect(JSON.parse(text.body)).toMatchObject({ prompt: 'describe', raw: true });
  });
});

describe('--images flags', () => {
  const resolve = (typed: RawRunFlags) => resolveRunOptions({ profile: 'sweep', arrival: 'constant', sweepRates: '9', ...typed }, {}, undefined, []);
  /** Against a server of one's own unless `sim` (then the built-in simulator and its model). */
  const problem = (typed: RawRunFlags, sim = false): string => {
    try {
      resolve(sim ? typed : { target: 'http://127.0.0.1:9', ...typed });
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error('no problem reported');
  };

  it('--images N defaults to 512x512; --image-size WxH sets it', () => {
    expect(resolve({ images: '2', target: 'http://127.0.0.1:9' }).workload.images).toEqual({ count: 2, width: 512, height: 512 });
    expect(resolve({ images: '1', imageSize: '1024x768', api: 'ollama', target: 'http://127.0.0.1:9' }).workload.images).toEqual({ count: 1, width: 1024, height: 768 });
    expect(resolve({ images: '1', model: 'Qwen2.5-VL-7B-Instruct' }).workload.images).toEqual({ count: 1, width: 512, height: 512 });
    expect(resolve({}).workload.images).toBeUndefined();
  });

  it('names each mistake in one line', () => {
    expect(problem({ imageSize: '512x512' })).toMatch(/^--image-size goes with --images N/);
    expect(problem({ images: '1', imageSize: '512' })).toMatch(/^--image-size "512" is not WIDTHxHEIGHT/);
    expect(problem({ images: '0' })).toMatch(/^--images "0" is not a whole number > 0/);
    expect(problem({ images: '1', api: 'openai-completions' })).toMatch(/^--images needs a chat API that carries images; --api openai-completions sends text only/);
    expect(problem({ images: '1', api: 'triton' })).toContain('--api triton sends text only');
    expect(problem({ images: '1', turns: '3' })).toMatch(/^--images does not go with --turns yet/);
    // The built-in simulator's default model reads no images: said before the run, with the models that do.
    expect(problem({ images: '1' }, true)).toMatch(/^--images: the simulated Qwen2-7B-Instruct is a text-only model; simulate a vision one with --model \(.*Qwen2\.5-VL-7B-Instruct/);
  });

  it('a detected text route of a server with a chat route becomes openai-chat; the others stay', () => {
    expect(['openai-completions', 'tgi', 'sglang', 'lmdeploy', 'llamacpp', 'openai-chat', 'ollama', 'vllm', 'triton'].map((a) => imageApiFor(a as never))).toEqual([
      'openai-chat', 'openai-chat', 'openai-chat', 'openai-chat', 'openai-chat', 'openai-chat', 'ollama', 'vllm', 'triton',
    ]);
  });
});

describe('vision tokens in the simulator (sim/wire/vision.ts)', () => {
  const vision = (model: string): VisionSpec => findModel(model).spec.vision as VisionSpec;
  const tokens = (model: string, w: number, h: number): number | string => {
    const c = imageCost(vision(model), w, h);
    return typeof c === 'string' ? c : c.tokens;
  };

  it("Qwen2-VL / Qwen2.5-VL: smart_resize to multiples of 28 (Python's half-even round), one token per 28², +2", () => {
    expect(tokens('Qwen2.5-VL-7B-Instruct', 512, 512)).toBe(18 * 18 + 2); // 512/28 = 18.29 → 504
    expect(tokens('Qwen2-VL-7B-Instruct', 640, 480)).toBe(23 * 17 + 2); // 644 × 476
    expect(tokens('Qwen2.5-VL-72B-Instruct', 1024, 1024)).toBe(37 * 37 + 2);
    // 70/28 = 2.5 and 42/28 = 1.5 both round to 2 (half-up would give 3 × 2)
    expect(tokens('Qwen2.5-VL-7B', 70, 42)).toBe(2 * 2 + 2);
    // Over max_pixels (12,845,056 = 3584²): scaled down to it, sides floored to 28 (figures from HF's smart_resize in Python)
    expect(tokens('Qwen2.5-VL-32B-Instruct', 8000, 8000)).toBe(128 * 128 + 2);
    expect(tokens('Qwen2.5-VL-32B-Instruct', 9000, 5000)).toBe(171 * 95 + 2); // 9000 × 5000 → 4788 × 2660
    expect(tokens('Qwen2.5-VL-7B', 8, 100)).toMatch(/must be larger than factor:28/);
    expect(tokens('Qwen2.5-VL-7B', 11, 4000)).toMatch(/aspect ratio must be smaller than 200/);
  });

  it('LLaVA-1.5: 576 per image; LLaVA-NeXT anyres: base + unpadded grid + a newline per row; Gemma 3: 256 + 4', () => {
    expect(tokens('llava-1.5-7b-hf', 512, 512)).toBe(576);
    expect(tokens('llava-1.5-7b-hf', 1920, 1080)).toBe(576);
    expect(tokens('llava-v1.6-mistral-7b-hf', 512, 512)).toBe(48 * 48 + 48 + 576);
    expect(tokens('llava-v1.6-mistral-7b-hf', 1024, 768)).toBe(36 * 48 + 36 + 576);
    // Wide images pick another grid (figures from HF's LlavaNextProcessor code run in Python)
    expect(tokens('llava-v1.6-mistral-7b-hf', 1920, 1080)).toBe(1948);
    expect(tokens('llava-v1.6-mistral-7b-hf', 1200, 300)).toBe(1890);
    expect(tokens('gemma-3-27b-it', 640, 480)).toBe(260);
    expect(findModel('Gemma-3-1B').spec.vision).toBeUndefined();
    expect(findModel('Llama-3.1-8B').spec.vision).toBeUndefined();
  });

  it('reads PNG and JPEG sizes from their first bytes', () => {
    expect(imageSize(noisePng(300, 200, 1).toString('base64'))).toEqual({ width: 300, height: 200 });
    // SOI, an APP0 segment of 16 bytes, then SOF0 with height 480 and width 640
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, ...new Array(14).fill(0), 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80, 0x03, ...new Array(9).fill(0)]);
    expect(imageSize(jpeg.toString('base64'))).toEqual({ width: 640, height: 480 });
    expect(imageSize(Buffer.from('GIF89a....').toString('base64'))).toBeUndefined();
  });

  it('notes image tokens for the chat count and refuses what the engine would refuse', () => {
    const url = imageDataUrl({ count: 1, width: 512, height: 512 }, 1, 0, 0);
    const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }, { type: 'image_url', image_url: { url } }] }] };
    const text = countChat([{ role: 'user', content: 'hello there' }]);
    const read = readImages(body, 'Qwen2.5-VL-7B-Instruct', vision('Qwen2.5-VL-7B'), 'vllm');
    expect(read).toMatchObject({ ok: true, use: { images: 1, tokens: 326 } });
    expect(imageTokensOf(body.messages)).toBe(326);
    const withImage = countChat(body.messages);
    expect(withImage.ok && text.ok && withImage.tokens - text.tokens).toBe(326);
    // ~2 FLOPs per encoder parameter per 14² patch (36 × 36 patches for 504²)
    expect(read.ok && read.use?.encoderFlops).toBeCloseTo(2 * 36 * 36 * (629e6 + 5120 * (5120 + 3584)), -6);
    expect(readImages(body, 'Llama-3.1-8B', undefined, 'vllm')).toEqual({ ok: false, message: 'Llama-3.1-8B is not a multimodal model' });
    const remote = { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] };
    expect(readImages(remote, 'm', vision('Qwen2.5-VL-7B'), 'sglang')).toMatchObject({ ok: false, message: expect.stringMatching(/^cannot fetch image from https:\/\/example.com\/cat.png/) });
    const ollamaBody = { images: [url.slice(url.indexOf(',') + 1)], prompt: 'x' };
    expect(readImages(ollamaBody, 'm', vision('Qwen2.5-VL-7B'), 'ollama')).toMatchObject({ ok: true, use: { tokens: 326 } });
    expect(imageTokensOf(ollamaBody)).toBe(326);
    expect(readImages({ messages: [{ role: 'user', content: 'hi' }] }, 'm', undefined, 'vllm')).toEqual({ ok: true });
  });
});
