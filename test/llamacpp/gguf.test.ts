import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GgmlType, GgufType, type GgufValue, f32ToF16, readGguf, writeGguf } from '../../scripts/llamacpp/gguf.js';
import { DEFAULT_SHAPE, makeTinyGguf, tinyMetadata, tinyTensors } from '../../scripts/llamacpp/make-tiny-gguf.js';

const dirs: string[] = [];
const tmp = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-test-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A 6-token GPT-2-style vocabulary file, as llama.cpp's models/ggml-vocab-*.gguf are (metadata, no tensors). */
function writeVocab(path: string): void {
  const md = new Map<string, GgufValue>([
    ['general.architecture', { type: GgufType.STRING, value: 'gpt2' }],
    ['tokenizer.ggml.model', { type: GgufType.STRING, value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: GgufType.STRING, value: 'gpt-2' }],
    ['tokenizer.ggml.tokens', { type: GgufType.ARRAY, elemType: GgufType.STRING, values: ['a', 'b', 'ab', 'Ġc', 'é', '<|endoftext|>'] }],
    ['tokenizer.ggml.token_type', { type: GgufType.ARRAY, elemType: GgufType.INT32, values: [1, 1, 1, 1, 1, 3] }],
    ['tokenizer.ggml.merges', { type: GgufType.ARRAY, elemType: GgufType.STRING, values: ['a b'] }],
    ['tokenizer.ggml.eos_token_id', { type: GgufType.UINT32, value: 5 }],
  ]);
  writeGguf(path, md, []);
}

describe('GGUF writer/reader', () => {
  it('writes the v3 header and reads every value type back unchanged', () => {
    const path = join(tmp(), 'kv.gguf');
    const md = new Map<string, GgufValue>([
      ['u8', { type: GgufType.UINT8, value: 250 }],
      ['i8', { type: GgufType.INT8, value: -5 }],
      ['u16', { type: GgufType.UINT16, value: 65000 }],
      ['i16', { type: GgufType.INT16, value: -30000 }],
      ['u32', { type: GgufType.UINT32, value: 4_000_000_000 }],
      ['i32', { type: GgufType.INT32, value: -2_000_000_000 }],
      ['f32', { type: GgufType.FLOAT32, value: 0.5 }],
      ['bool', { type: GgufType.BOOL, value: true }],
      ['str', { type: GgufType.STRING, value: 'héllo' }],
      ['u64', { type: GgufType.UINT64, value: 2n ** 40n }],
      ['i64', { type: GgufType.INT64, value: -(2n ** 40n) }],
      ['f64', { type: GgufType.FLOAT64, value: 1 / 3 }],
      ['arr', { type: GgufType.ARRAY, elemType: GgufType.STRING, values: ['x', 'yz', ''] }],
    ]);
    writeGguf(path, md, []);
    const buf = readFileSync(path);
    expect(buf.toString('latin1', 0, 4)).toBe('GGUF');
    expect(buf.readUInt32LE(4)).toBe(3);
    const back = readGguf(path);
    expect(back.version).toBe(3);
    expect([...back.metadata.keys()]).toEqual([...md.keys()]);
    for (const [k, v] of md) expect(back.metadata.get(k)).toEqual(v);
  });

  it('places tensor data on aligned offsets after the header, f32 verbatim and f16 converted', () => {
    const path = join(tmp(), 't.gguf');
    const a = new Float32Array([1, 2, 3]);
    const b = new Float32Array([0.5, -2, 65504, 1e-8]);
    const bytes = writeGguf(path, new Map(), [
      { name: 'a', dims: [3], type: GgmlType.F32, data: a },
      { name: 'b', dims: [2, 2], type: GgmlType.F16, data: b },
    ]);
    expect(statSync(path).size).toBe(bytes);
    const file = readGguf(path);
    expect(file.tensors.map((t) => [t.name, t.dims, t.type, t.offset])).toEqual([
      ['a', [3], GgmlType.F32, 0n],
      ['b', [2, 2], GgmlType.F16, 32n],
    ]);
    const buf = readFileSync(path);
    // Data starts at the first 32-byte boundary after the tensor infos; 'b' 32 bytes later.
    const dataStart = bytes - 32 - 32;
    expect(dataStart % 32).toBe(0);
    expect([0, 1, 2].map((i) => buf.readFloatLE(dataStart + 4 * i))).toEqual([1, 2, 3]);
    expect([0, 1, 2, 3].map((i) => buf.readUInt16LE(dataStart + 32 + 2 * i))).toEqual([0x3800, 0xc000, 0x7bff, 0x0000]);
  });

  it('converts f32 to f16 with round-to-nearest-even, subnormals and infinities', () => {
    expect(f32ToF16(1)).toBe(0x3c00);
    expect(f32ToF16(-0)).toBe(0x8000);
    expect(f32ToF16(1 + 2 ** -11)).toBe(0x3c00); // halfway: rounds to even
    expect(f32ToF16(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(f32ToF16(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(f32ToF16(1e6)).toBe(0x7c00);
    expect(f32ToF16(Number.NaN) & 0x7e00).toBe(0x7e00);
  });
});

describe('tiny llama GGUF', () => {
  it('copies the tokenizer from the vocab file and writes every llama tensor with its dims', () => {
    const dir = tmp();
    writeVocab(join(dir, 'vocab.gguf'));
    const out = join(dir, 'tiny.gguf');
    makeTinyGguf(join(dir, 'vocab.gguf'), out, { ...DEFAULT_SHAPE, nEmbd: 8, nHeads: 2, nFf: 16, nLayers: 2 });
    const f = readGguf(out);
    expect(f.metadata.get('general.architecture')).toEqual({ type: GgufType.STRING, value: 'llama' });
    expect(f.metadata.get('llama.embedding_length')).toEqual({ type: GgufType.UINT32, value: 8 });
    expect(f.metadata.get('llama.rope.dimension_count')).toEqual({ type: GgufType.UINT32, value: 4 });
    expect(f.metadata.get('tokenizer.ggml.pre')).toEqual({ type: GgufType.STRING, value: 'gpt-2' });
    const tokens = f.metadata.get('tokenizer.ggml.tokens');
    expect(tokens?.type === GgufType.ARRAY ? tokens.values : []).toEqual(['a', 'b', 'ab', 'Ġc', 'é', '<|endoftext|>']);
    expect(f.metadata.get('tokenizer.ggml.add_bos_token')).toEqual({ type: GgufType.BOOL, value: false });
    expect(f.metadata.has('general.name')).toBe(true);
    expect(f.tensors).toHaveLength(3 + 2 * 9);
    const dims = new Map(f.tensors.map((t) => [t.name, t.dims]));
    expect(dims.get('token_embd.weight')).toEqual([8, 6]);
    expect(dims.get('output.weight')).toEqual([8, 6]);
    expect(dims.get('blk.1.ffn_down.weight')).toEqual([16, 8]);
    expect(dims.get('blk.1.ffn_up.weight')).toEqual([8, 16]);
    expect(f.tensors.every((t) => t.offset % 32n === 0n)).toBe(true);
  });

  it('is deterministic for a seed and makes end-of-text dominant only when asked', () => {
    const shape = { ...DEFAULT_SHAPE, nEmbd: 8, nHeads: 2, nFf: 16, nLayers: 1 };
    const plain = tinyTensors(6, shape);
    expect(tinyTensors(6, shape).map((t) => [...t.data])).toEqual(plain.map((t) => [...t.data]));
    const biased = tinyTensors(6, { ...shape, eosBias: 4 }, 5);
    const output = biased.find((t) => t.name === 'output.weight');
    const embd = biased.find((t) => t.name === 'token_embd.weight');
    expect(output?.data[5 * 8]).toBe(4);
    expect([0, 1, 2, 3, 4, 5].map((tok) => embd?.data[tok * 8])).toEqual([1, 1, 1, 1, 1, 1]);
    expect(Math.max(...(plain.find((t) => t.name === 'output.weight')?.data ?? []).map(Math.abs))).toBeLessThan(0.2);
  });

  it('refuses a vocab file without tokens', () => {
    expect(() => tinyMetadata(new Map(), DEFAULT_SHAPE)).toThrow(/tokenizer.ggml.tokens/);
  });
});
