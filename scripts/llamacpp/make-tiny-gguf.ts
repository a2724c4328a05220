/**
 * Writes a tiny random-weight llama-architecture GGUF that llama.cpp's llama-server can load, with GPT-2's
 * tokenizer copied from llama.cpp's `models/ggml-vocab-gpt-2.gguf` (so prompts tokenize like real text).
 * It generates gibberish at a steady speed, which is all a benchmark of the serving stack needs.
 *
 *   tsx scripts/llamacpp/make-tiny-gguf.ts --vocab PATH/ggml-vocab-gpt-2.gguf --out PATH/tiny.gguf
 *     [--embd 64] [--layers 2] [--heads 4] [--ff 256] [--ctx 2048] [--seed 1] [--f16] [--eos-bias 4]
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { GgmlType, GgufType, type GgufValue, type TensorToWrite, readGguf, writeGguf } from './gguf.js';

export interface TinyModelShape {
  nEmbd: number;
  nLayers: number;
  nHeads: number;
  nFf: number;
  nCtxTrain: number;
  seed: number;
  /** f16 for the 2-D weight matrices (norms stay f32, as llama.cpp's converters write them). */
  f16: boolean;
  /**
   * > 0 makes end-of-text the model's overwhelming choice (its logit ≈ 8 × this, the others ≈ ±1): without
   * `ignore_eos` every request stops after one token, so a full-length reply proves the client forced it.
   */
  eosBias: number;
}

export const DEFAULT_SHAPE: TinyModelShape = { nEmbd: 64, nLayers: 2, nHeads: 4, nFf: 256, nCtxTrain: 2048, seed: 1, f16: false, eosBias: 0 };

/** mulberry32 + Box–Muller: seeded normal samples, so the same seed writes the same file. */
function normalSampler(seed: number): () => number {
  let a = seed >>> 0;
  const uniform = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** Builds the metadata: llama hyper-parameters, then every `tokenizer.ggml.*` key of the vocab file. */
export function tinyMetadata(vocab: Map<string, GgufValue>, shape: TinyModelShape): Map<string, GgufValue> {
  const u32 = (value: number): GgufValue => ({ type: GgufType.UINT32, value });
  const str = (value: string): GgufValue => ({ type: GgufType.STRING, value });
  const tokens = vocab.get('tokenizer.ggml.tokens');
  if (tokens?.type !== GgufType.ARRAY) throw new Error('the vocab file has no tokenizer.ggml.tokens array');
  const md = new Map<string, GgufValue>([
    ['general.architecture', str('llama')],
    ['general.name', str(`inferbench-tiny-llama-${shape.nEmbd}x${shape.nLayers}`)],
    ['general.alignment', u32(32)],
    ['general.file_type', u32(shape.f16 ? 1 : 0)],
    ['llama.vocab_size', u32(tokens.values.length)],
    ['llama.context_length', u32(shape.nCtxTrain)],
    ['llama.embedding_length', u32(shape.nEmbd)],
    ['llama.block_count', u32(shape.nLayers)],
    ['llama.feed_forward_length', u32(shape.nFf)],
    ['llama.attention.head_count', u32(shape.nHeads)],
    ['llama.attention.head_count_kv', u32(shape.nHeads)],
    ['llama.rope.dimension_count', u32(shape.nEmbd / shape.nHeads)],
    ['llama.rope.freq_base', { type: GgufType.FLOAT32, value: 10000 }],
    ['llama.attention.layer_norm_rms_epsilon', { type: GgufType.FLOAT32, value: 1e-5 }],
  ]);
  for (const [key, v] of vocab) if (key.startsWith('tokenizer.')) md.set(key, v);
  // GPT-2 has no BOS: make it explicit, so the server's prompt count is the text's token count.
  md.set('tokenizer.ggml.add_bos_token', { type: GgufType.BOOL, value: false });
  md.set('tokenizer.ggml.add_eos_token', { type: GgufType.BOOL, value: false });
  return md;
}

/** The llama tensors (dims innermost first, as ggml's ne[]), random normal × 0.02, norms at 1. */
export function tinyTensors(nVocab: number, shape: TinyModelShape, eosId?: number): TensorToWrite[] {
  const { nEmbd, nFf, nLayers } = shape;
  if (nEmbd % shape.nHeads !== 0) throw new Error(`--embd ${nEmbd} is not a multiple of --heads ${shape.nHeads}`);
  const normal = normalSampler(shape.seed);
  const matType = shape.f16 ? GgmlType.F16 : GgmlType.F32;
  const matrix = (name: string, ne0: number, ne1: number): TensorToWrite => {
    const data = new Float32Array(ne0 * ne1);
    for (let i = 0; i < data.length; i++) data[i] = 0.02 * normal();
    return { name, dims: [ne0, ne1], type: matType, data };
  };
  const norm = (name: string): TensorToWrite => ({ name, dims: [nEmbd], type: GgmlType.F32, data: new Float32Array(nEmbd).fill(1) });
  const embd = matrix('token_embd.weight', nEmbd, nVocab);
  const output = matrix('output.weight', nEmbd, nVocab);
  if (shape.eosBias > 0 && eosId !== undefined) {
    // Every token embedding carries a constant 1 in dimension 0; the layers add only ~0.02-scale noise, so
    // after the final RMS norm dimension 0 is ≈ 8 and EOS's output row turns it into a dominant logit.
    for (let t = 0; t < nVocab; t++) embd.data[t * nEmbd] = 1;
    output.data[eosId * nEmbd] = shape.eosBias;
  }
  const tensors: TensorToWrite[] = [embd, norm('output_norm.weight'), output];
  for (let i = 0; i < nLayers; i++) {
    tensors.push(
      norm(`blk.${i}.attn_norm.weight`),
      matrix(`blk.${i}.attn_q.weight`, nEmbd, nEmbd),
      matrix(`blk.${i}.attn_k.weight`, nEmbd, nEmbd),
      matrix(`blk.${i}.attn_v.weight`, nEmbd, nEmbd),
      matrix(`blk.${i}.attn_output.weight`, nEmbd, nEmbd),
      norm(`blk.${i}.ffn_norm.weight`),
      matrix(`blk.${i}.ffn_gate.weight`, nEmbd, nFf),
      matrix(`blk.${i}.ffn_down.weight`, nFf, nEmbd),
      matrix(`blk.${i}.ffn_up.weight`, nEmbd, nFf),
    );
  }
  return tensors;
}

/** Reads the vocab GGUF and writes the tiny model; returns the file's size in bytes. */
export function makeTinyGguf(vocabPath: string, outPath: string, shape: TinyModelShape = DEFAULT_SHAPE): number {
  const vocab = readGguf(vocabPath).metadata;
  const metadata = tinyMetadata(vocab, shape);
  const tokens = metadata.get('tokenizer.ggml.tokens');
  const nVocab = tokens?.type === GgufType.ARRAY ? tokens.values.length : 0;
  const eos = metadata.get('tokenizer.ggml.eos_token_id');
  const eosId = eos?.type === GgufType.UINT32 ? Number(eos.value) : undefined;
  if (shape.eosBias > 0 && eosId === undefined) throw new Error('--eos-bias needs tokenizer.ggml.eos_token_id in the vocab file');
  return writeGguf(outPath, metadata, tinyTensors(nVocab, shape, eosId));
}

function main(): void {
  const { values } = parseArgs({
    options: {
      vocab: { type: 'string' },
      out: { type: 'string' },
      embd: { type: 'string' },
      layers: { type: 'string' },
      heads: { type: 'string' },
      ff: { type: 'string' },
      ctx: { type: 'string' },
      seed: { type: 'string' },
      f16: { type: 'boolean' },
      'eos-bias': { type: 'string' },
    },
  });
  if (values.vocab === undefined || values.out === undefined) {
    console.error('usage: make-tiny-gguf --vocab PATH/ggml-vocab-gpt-2.gguf --out PATH/tiny.gguf [--embd 64 --layers 2 --heads 4 --ff 256 --ctx 2048 --seed 1 --f16 --eos-bias 4]');
    process.exit(2);
  }
  const int = (v: string | undefined, d: number): number => (v === undefined ? d : Number.parseInt(v, 10));
  const d = DEFAULT_SHAPE;
  const shape: TinyModelShape = {
    nEmbd: int(values.embd, d.nEmbd),
    nLayers: int(values.layers, d.nLayers),
    nHeads: int(values.heads, d.nHeads),
    nFf: int(values.ff, d.nFf),
    nCtxTrain: int(values.ctx, d.nCtxTrain),
    seed: int(values.seed, d.seed),
    f16: values.f16 === true,
    eosBias: Number(values['eos-bias'] ?? d.eosBias),
  };
  const bytes = makeTinyGguf(values.vocab, values.out, shape);
  console.log(`wrote ${values.out} (${(bytes / 1e6).toFixed(1)} MB)`);
}

if (process.argv[1] !== undefined && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) main();
