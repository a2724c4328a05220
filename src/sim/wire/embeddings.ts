/**
 * POST /v1/embeddings on the simulated engines that have it (vLLM and SGLang serving a pooling model, llama.cpp
 * started with --embeddings; TEI is a server of its own and lmdeploy answers "Unsupported by turbomind.").
 * Each input enters the engine's scheduler as its own prompt that generates nothing (prefill only, batched with
 * other prefills as the real engines batch pooling requests); the reply leaves when the last one is done, with
 * usage.prompt_tokens = Σ the inputs' counts in the sim's tokenizer (the count /tokenize and /v1/completions give).
 * Vectors are deterministic: unit-length, of the model's hidden size (or `dimensions`), picked by each text's hash
 * from a small set made once, so a reply costs string joins, not arithmetic per float.
 */
import type { SimRequestHandle, SimRequestListener } from '../types.js';
import { countPrompt } from './filler.js';
import { asObj, type Obj } from './request.js';
import { EMBEDDING_WIRES } from './embedding-wires.js';
import { json, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type HttpReply, type Route, type WireContext } from './types.js';

export { EMBEDDING_WIRES };
type Shape = (typeof EMBEDDING_WIRES)[number];

/** Hidden size when the catalog entry has none (the sim's default model, Qwen2-7B, has 3584). */
const DEFAULT_DIMS = 4096;
/** Distinct vectors per size: texts share one by hash. */
const VARIANTS = 64;

interface ReadEmbeddings {
  model: string | undefined;
  /** Prompt tokens of each input. */
  counts: number[];
  /** A hash of each input, picking its vector. */
  hashes: number[];
  dims: number;
  base64: boolean;
}

function hashText(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** `input`: a string, a list of strings, a list of token ids, or a list of id lists (OpenAI's four forms). */
function readInputs(input: unknown): { counts: number[]; hashes: number[] } | string {
  if (input === undefined || input === null) return 'input is required';
  const list: unknown[] = typeof input === 'string' ? [input] : Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'number') ? [input] : Array.isArray(input) ? input : [];
  if (list.length === 0) return 'input must be a non-empty string or list';
  const counts: number[] = [];
  const hashes: number[] = [];
  for (const one of list) {
    const pc = countPrompt(one);
    if (!pc.ok) return `each input must be a string or a list of token ids`;
    counts.push(pc.tokens);
    hashes.push(hashText(typeof one === 'string' ? one : JSON.stringify(one)));
  }
  return { counts, hashes };
}

function readBody(ctx: WireContext, raw: unknown): ReadEmbeddings | string {
  const body: Obj | undefined = asObj(raw);
  if (!body) return 'request body must be a JSON object';
  const inputs = readInputs(body['input']);
  if (typeof inputs === 'string') return inputs;
  const hidden = ctx.hiddenSize ?? DEFAULT_DIMS;
  const d = body['dimensions'];
  let dims = hidden;
  if (d !== undefined && d !== null) {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 1 || d > hidden) return `dimensions must be a whole number from 1 to ${hidden}`;
    dims = d;
  }
  const format = body['encoding_format'] ?? 'float';
  if (format !== 'float' && format !== 'base64') return `encoding_format must be float or base64, not ${JSON.stringify(format)}`;
  return { model: typeof body['model'] === 'string' ? body['model'] : undefined, ...inputs, dims, base64: format === 'base64' };
}

const vectorCache = new Map<string, string[]>();

/** The `VARIANTS` vectors of one size, each as its JSON text (4 decimals) or base64 of little-endian float32. */
function vectors(dims: number, base64: boolean): string[] {
  const key = `${dims}:${base64 ? 'b' : 'f'}`;
  const cached = vectorCache.get(key);
  if (cached) return cached;
  const out: string[] = [];
  for (let v = 0; v < VARIANTS; v++) {
    const f = new Float32Array(dims);
    let h = Math.imul(v + 1, 0x9e3779b1) >>> 0;
    let norm = 0;
    for (let j = 0; j < dims; j++) {
      h = (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + 0x297a2d39) >>> 0;
      const x = h / 4294967296 - 0.5;
      f[j] = x;
      norm += x * x;
    }
    const scale = 1 / Math.sqrt(norm || 1);
    for (let j = 0; j < dims; j++) f[j] = (f[j] as number) * scale;
    out.push(base64 ? JSON.stringify(Buffer.from(f.buffer).toString('base64')) : `[${Array.from(f, (x) => x.toFixed(4)).join(',')}]`);
  }
  vectorCache.set(key, out);
  return out;
}

/** The reply's `data` items in each engine's key order. */
function dataItems(shape: Shape, r: ReadEmbeddings): string {
  const vs = vectors(r.dims, r.base64);
  return r.hashes
    .map((h, i) => {
      const e = vs[h % VARIANTS] as string;
      return shape === 'vllm' ? `{"index":${i},"object":"embedding","embedding":${e}}` : `{"embedding":${e},"index":${i},"object":"embedding"}`;
    })
    .join(',');
}

/** vLLM (id embd-…, usage with completion_tokens 0), SGLang (no id), llama.cpp (ordered_json: model, object, usage, data). */
function replyBody(shape: Shape, ctx: WireContext, id: GenIdentity, r: ReadEmbeddings): string {
  const p = r.counts.reduce((a, b) => a + b, 0);
  const model = JSON.stringify(r.model ?? ctx.model);
  const data = dataItems(shape, r);
  const usage = `{"prompt_tokens":${p},"total_tokens":${p},"completion_tokens":0,"prompt_tokens_details":null}`;
  if (shape === 'vllm') return `{"id":"embd-${id.hex}","object":"list","created":${id.createdSec},"model":${JSON.stringify(ctx.model)},"data":[${data}],"usage":${usage}}`;
  if (shape === 'sglang') return `{"data":[${data}],"model":${model},"object":"list","usage":${usage}}`;
  return `{"model":${model},"object":"list","usage":{"prompt_tokens":${p},"total_tokens":${p}},"data":[${data}]}`;
}

/** The whole reply once every input is embedded; the streaming methods are never called (stream is false). */
function encoder(shape: Shape, ctx: WireContext, id: GenIdentity, r: ReadEmbeddings, error: (status: number, message: string) => HttpReply): GenEncoder {
  const none = (): string => '';
  return {
    delimiter: '',
    streamHeaders: () => ({ 'content-type': 'application/json' }),
    token: none,
    tail: none,
    // An input the engine dropped (it can never fit the KV cache) leaves the request without its vectors.
    body: (_count, finish) => (finish === 'abort' ? error(500, 'the engine aborted an input of this request') : json(200, replyBody(shape, ctx, id, r))),
  };
}

/**
 * The /v1/embeddings route of one engine, its errors in that engine's shape. The plan's `poolingInputs` makes the
 * server submit each input as a prefill-only request (poolingFanIn) instead of one generation.
 */
export function embeddingsRoute(shape: Shape, error: (status: number, message: string) => HttpReply): Route {
  return {
    method: 'POST',
    path: '/v1/embeddings',
    kind: 'generate',
    handle(ctx, input, id): GenPlan | HttpReply {
      const r = readBody(ctx, input.body);
      if (typeof r === 'string') return error(400, r);
      if (shape === 'vllm' && r.model !== undefined && r.model !== ctx.model) return error(404, `The model \`${r.model}\` does not exist.`);
      const longest = Math.max(...r.counts);
      if (longest > ctx.maxModelLen) {
        return error(400, `This model's maximum context length is ${ctx.maxModelLen} tokens. However, you requested ${longest} tokens in the input for embedding generation. Please reduce the length of the input.`);
      }
      const promptTokens = r.counts.reduce((a, b) => a + b, 0);
      return { promptTokens, maxTokens: 0, ignoreEos: true, stream: false, encoder: encoder(shape, ctx, id, r, error), poolingInputs: r.counts };
    },
  };
}

/**
 * One engine request per input, seen by the HTTP front as one: prefill starts with the first, ends with the last,
 * and the reply finishes when all have (an abort of any aborts the reply). `cancel` cancels them all.
 */
export function poolingFanIn(
  inputs: readonly number[],
  listener: SimRequestListener,
  submit: (promptTokens: number, each: SimRequestListener) => SimRequestHandle,
): SimRequestHandle {
  let started = false;
  let prefilled = 0;
  let finished = 0;
  let aborted = false;
  let cached = 0;
  const handles: SimRequestHandle[] = [];
  const each: SimRequestListener = {
    onPrefillStart(at, c) {
      cached += c;
      if (!started) listener.onPrefillStart?.(at, cached);
      started = true;
    },
    onPrefillEnd(at) {
      if (++prefilled === inputs.length) listener.onPrefillEnd?.(at);
    },
    onToken: () => undefined,
    onFinish(reason: FinishReason, at) {
      if (aborted) return;
      if (reason === 'abort') {
        aborted = true;
        for (const h of handles) h.cancel();
        listener.onFinish('abort', at);
        return;
      }
      if (++finished === inputs.length) listener.onFinish(reason, at);
    },
  };
  for (const n of inputs) handles.push(submit(n, each));
  return { id: handles[0]?.id ?? 0, cancel: () => handles.forEach((h) => h.cancel()) };
}
