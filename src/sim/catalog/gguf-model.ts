/**
 * A model described by its own GGUF file (`--model path/to/model.gguf`, or the path llama-server reports for the model
 * it serves): the architecture from the file's metadata (`<arch>.block_count`, `.embedding_length`,
 * `.feed_forward_length`, `.attention.head_count[_kv]`, `.context_length`) and the quantization from
 * `general.file_type` (or, when absent, the type of the first layer's attention-Q tensor). Only the header is read.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { configError } from '../../core/errors.js';
import type { ModelSpec, QuantName } from './types.js';

const MAGIC = 0x46554747; // "GGUF" as a little-endian u32
/** Metadata value types (gguf.h): 8 = string, 9 = array; the rest are fixed-size scalars. */
const SCALAR_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

/** llama_ftype (llama.h) of the types the simulator models. */
const FILE_TYPES: Record<number, QuantName> = { 0: 'F32', 1: 'fp16', 2: 'Q4_0', 7: 'Q8_0', 15: 'Q4_K_M', 17: 'Q5_K_M', 18: 'Q6_K', 32: 'bf16' };
/** ggml_type (ggml.h) of a tensor, for files without general.file_type. */
const TENSOR_TYPES: Record<number, QuantName> = { 0: 'F32', 1: 'fp16', 2: 'Q4_0', 8: 'Q8_0', 12: 'Q4_K_M', 13: 'Q5_K_M', 14: 'Q6_K', 30: 'bf16' };

class OutOfData extends Error {}

class HeaderReader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new OutOfData();
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  u64(): number {
    this.need(8);
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return Number(v);
  }
  string(): string {
    const n = this.u64();
    this.need(n);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  /** A scalar as a number or string; arrays are skipped and give their length. */
  value(type: number): number | string | boolean {
    if (type === 8) return this.string();
    if (type === 9) {
      const elem = this.u32();
      const n = this.u64();
      if (elem === 8) for (let i = 0; i < n; i++) this.string();
      else {
        const size = SCALAR_BYTES[elem];
        if (size === undefined) throw new Error(`unknown array element type ${elem}`);
        this.need(size * n);
        this.pos += size * n;
      }
      return n;
    }
    const size = SCALAR_BYTES[type];
    if (size === undefined) throw new Error(`unknown value type ${type}`);
    this.need(size);
    const b = this.buf;
    const p = this.pos;
    this.pos += size;
    switch (type) {
      case 0: return b.readUInt8(p);
      case 1: return b.readInt8(p);
      case 2: return b.readUInt16LE(p);
      case 3: return b.readInt16LE(p);
      case 4: return b.readUInt32LE(p);
      case 5: return b.readInt32LE(p);
      case 6: return b.readFloatLE(p);
      case 7: return b.readUInt8(p) !== 0;
      case 12: return b.readDoubleLE(p);
      default: return Number(type === 10 ? b.readBigUInt64LE(p) : b.readBigInt64LE(p));
    }
  }
}

interface GgufHeader {
  metadata: Map<string, number | string | boolean>;
  tensors: Map<string, { dims: number[]; type: number }>;
}

function parseHeader(buf: Buffer): GgufHeader {
  const r = new HeaderReader(buf);
  if (r.u32() !== MAGIC) throw new Error('not a GGUF file');
  const version = r.u32();
  if (version < 2) throw new Error(`GGUF version ${version} is not supported`);
  const nTensors = r.u64();
  const nKv = r.u64();
  const metadata = new Map<string, number | string | boolean>();
  for (let i = 0; i < nKv; i++) {
    const key = r.string();
    metadata.set(key, r.value(r.u32()));
  }
  const tensors = new Map<string, { dims: number[]; type: number }>();
  for (let i = 0; i < nTensors; i++) {
    const name = r.string();
    const nDims = r.u32();
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(r.u64());
    const type = r.u32();
    r.u64(); // data offset
    tensors.set(name, { dims, type });
  }
  return { metadata, tensors };
}

/** Reads as much of the file as its header needs (a vocabulary makes it a few MB). */
function readHeader(path: string): GgufHeader {
  const size = statSync(path).size;
  const fd = openSync(path, 'r');
  try {
    for (let want = 1 << 20; ; want *= 4) {
      const len = Math.min(want, size);
      const buf = Buffer.alloc(len);
      readSync(fd, buf, 0, len, 0);
      try {
        return parseHeader(buf);
      } catch (err) {
        if (!(err instanceof OutOfData)) throw err;
        if (len >= size || want >= 1 << 30) throw new Error('the header runs past the end of the file');
      }
    }
  } finally {
    closeSync(fd);
  }
}

export interface GgufModel {
  spec: ModelSpec;
  quant?: QuantName;
}

/** The model a GGUF file holds; a one-line config error when it is not a GGUF file or lacks the shape's keys. */
export function modelFromGguf(path: string): GgufModel {
  let h: GgufHeader;
  try {
    h = readHeader(path);
  } catch (err) {
    throw configError(`--model ${path}: cannot read it as a GGUF model (${(err as Error).message})`);
  }
  const arch = String(h.metadata.get('general.architecture') ?? 'llama');
  const num = (key: string): number | undefined => {
    const v = h.metadata.get(`${arch}.${key}`);
    return typeof v === 'number' && v > 0 ? v : undefined;
  };
  const hidden = num('embedding_length');
  const layers = num('block_count');
  const heads = num('attention.head_count');
  const embd = h.tensors.get('token_embd.weight');
  const vocab = num('vocab_size') ?? (h.metadata.get('tokenizer.ggml.tokens') as number | undefined) ?? embd?.dims[1];
  const missing = [['embedding_length', hidden], ['block_count', layers], ['attention.head_count', heads], ['vocab_size', vocab]]
    .filter(([, v]) => v === undefined).map(([k]) => `${arch}.${k}`);
  if (missing.length || !hidden || !layers || !heads || !vocab) {
    throw configError(`--model ${path}: the GGUF file has no ${missing.join(', ')} (architecture ${arch})`, 'pass --model NAME of a catalog model with the same architecture');
  }
  const ft = h.metadata.get('general.file_type');
  const q0 = h.tensors.get('blk.0.attn_q.weight')?.type;
  const quant = typeof ft === 'number' ? FILE_TYPES[ft] : q0 !== undefined ? TENSOR_TYPES[q0] : undefined;
  const name = String(h.metadata.get('general.name') ?? '') || basename(path).replace(/\.gguf$/i, '');
  const spec: ModelSpec = {
    name: basename(path),
    layers,
    hidden,
    heads,
    kvHeads: num('attention.head_count_kv') ?? heads,
    headDim: num('attention.key_length') ?? hidden / heads,
    ffn: num('feed_forward_length') ?? 4 * hidden,
    vocab,
    tiedEmbeddings: !h.tensors.has('output.weight'),
    maxModelLen: num('context_length') ?? 4096,
    source: `GGUF header of ${path} (${arch}${name !== basename(path) ? `, "${name}"` : ''}${quant ? `, ${quant}` : ''})`,
  };
  return { spec, ...(quant ? { quant } : {}) };
}
