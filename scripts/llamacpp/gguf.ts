/**
 * A minimal GGUF (v3) reader and writer: enough to read a vocabulary file's metadata and to write a small
 * model with f32/f16 tensors. Layout (little-endian): magic "GGUF", u32 version, u64 tensor count, u64
 * metadata count; then the metadata (key, u32 value type, value); then tensor infos (name, u32 n_dims,
 * u64 dims[n_dims] innermost first, u32 ggml type, u64 offset into the data section); then padding to
 * `general.alignment` (32 by default) and the tensor data, each tensor starting on an aligned offset.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_VERSION = 3;
export const DEFAULT_ALIGNMENT = 32;

/** GGUF metadata value types. */
export enum GgufType {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
}

/** ggml tensor types this writer supports. */
export enum GgmlType {
  F32 = 0,
  F16 = 1,
}

export type Scalar = number | bigint | boolean | string;
export type GgufValue =
  | { type: Exclude<GgufType, GgufType.ARRAY>; value: Scalar }
  | { type: GgufType.ARRAY; elemType: Exclude<GgufType, GgufType.ARRAY>; values: Scalar[] };

export interface GgufTensorInfo {
  name: string;
  dims: number[];
  type: GgmlType;
  offset: bigint;
}

export interface GgufFile {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
}

class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}
  u32(): number {
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return v;
  }
  count(): number {
    const v = this.u64();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`GGUF: count ${v} too large at byte ${this.pos - 8}`);
    return Number(v);
  }
  string(): string {
    const len = this.count();
    const s = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return s;
  }
  scalar(type: GgufType): Scalar {
    const b = this.buf;
    const p = this.pos;
    switch (type) {
      case GgufType.UINT8: this.pos += 1; return b.readUInt8(p);
      case GgufType.INT8: this.pos += 1; return b.readInt8(p);
      case GgufType.UINT16: this.pos += 2; return b.readUInt16LE(p);
      case GgufType.INT16: this.pos += 2; return b.readInt16LE(p);
      case GgufType.UINT32: this.pos += 4; return b.readUInt32LE(p);
      case GgufType.INT32: this.pos += 4; return b.readInt32LE(p);
      case GgufType.FLOAT32: this.pos += 4; return b.readFloatLE(p);
      case GgufType.BOOL: this.pos += 1; return b.readUInt8(p) !== 0;
      case GgufType.STRING: return this.string();
      case GgufType.UINT64: this.pos += 8; return b.readBigUInt64LE(p);
      case GgufType.INT64: this.pos += 8; return b.readBigInt64LE(p);
      case GgufType.FLOAT64: this.pos += 8; return b.readDoubleLE(p);
      default: throw new Error(`GGUF: unknown value type ${type} at byte ${p}`);
    }
  }
  value(): GgufValue {
    const type = this.u32() as GgufType;
    if (type !== GgufType.ARRAY) return { type, value: this.scalar(type) };
    const elemType = this.u32() as Exclude<GgufType, GgufType.ARRAY>;
    if (elemType === (GgufType.ARRAY as number)) throw new Error('GGUF: nested arrays are not supported');
    const n = this.count();
    const values: Scalar[] = new Array<Scalar>(n);
    for (let i = 0; i < n; i++) values[i] = this.scalar(elemType);
    return { type, elemType, values };
  }
}

/** Reads a GGUF file's header, metadata and tensor infos (not the tensor data). */
export function readGguf(path: string): GgufFile {
  const r = new Reader(readFileSync(path));
  const magic = r.u32();
  if (magic !== GGUF_MAGIC) throw new Error(`${path} is not a GGUF file (magic 0x${magic.toString(16)})`);
  const version = r.u32();
  if (version < 2) throw new Error(`${path}: GGUF version ${version} is not supported (2 or 3 only)`);
  const nTensors = r.count();
  const nKv = r.count();
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < nKv; i++) {
    const key = r.string();
    metadata.set(key, r.value());
  }
  const tensors: GgufTensorInfo[] = [];
  for (let i = 0; i < nTensors; i++) {
    const name = r.string();
    const nDims = r.u32();
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(r.count());
    tensors.push({ name, dims, type: r.u32() as GgmlType, offset: r.u64() });
  }
  return { version, metadata, tensors };
}

/** A tensor to write: `dims` innermost first (ggml's ne[0], ne[1], …), `data` row-major in that order. */
export interface TensorToWrite {
  name: string;
  dims: number[];
  type: GgmlType;
  data: Float32Array;
}

/** Appends little-endian bytes to a list of chunks. */
class Writer {
  readonly chunks: Buffer[] = [];
  size = 0;
  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  u64(v: number | bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  string(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  scalar(type: GgufType, v: Scalar): void {
    const fixed: Partial<Record<GgufType, [number, (b: Buffer) => void]>> = {
      [GgufType.UINT8]: [1, (b) => b.writeUInt8(Number(v))],
      [GgufType.INT8]: [1, (b) => b.writeInt8(Number(v))],
      [GgufType.UINT16]: [2, (b) => b.writeUInt16LE(Number(v))],
      [GgufType.INT16]: [2, (b) => b.writeInt16LE(Number(v))],
      [GgufType.UINT32]: [4, (b) => b.writeUInt32LE(Number(v))],
      [GgufType.INT32]: [4, (b) => b.writeInt32LE(Number(v))],
      [GgufType.FLOAT32]: [4, (b) => b.writeFloatLE(Number(v))],
      [GgufType.BOOL]: [1, (b) => b.writeUInt8(v === true ? 1 : 0)],
      [GgufType.UINT64]: [8, (b) => b.writeBigUInt64LE(BigInt(v))],
      [GgufType.INT64]: [8, (b) => b.writeBigInt64LE(BigInt(v))],
      [GgufType.FLOAT64]: [8, (b) => b.writeDoubleLE(Number(v))],
    };
    if (type === GgufType.STRING) return this.string(String(v));
    const f = fixed[type];
    if (f === undefined) throw new Error(`GGUF: cannot write value type ${type}`);
    const b = Buffer.alloc(f[0]);
    f[1](b);
    this.push(b);
  }
  value(v: GgufValue): void {
    this.u32(v.type);
    if (v.type !== GgufType.ARRAY) return this.scalar(v.type, v.value);
    this.u32(v.elemType);
    this.u64(v.values.length);
    for (const x of v.values) this.scalar(v.elemType, x);
  }
  padTo(alignment: number): void {
    const pad = (alignment - (this.size % alignment)) % alignment;
    if (pad > 0) this.push(Buffer.alloc(pad));
  }
}

const align = (n: number, a: number): number => Math.ceil(n / a) * a;

function tensorBytes(t: TensorToWrite): Buffer {
  const n = t.dims.reduce((a, b) => a * b, 1);
  if (t.data.length !== n) throw new Error(`tensor ${t.name}: ${t.data.length} values for dims ${t.dims.join('×')}`);
  if (t.type === GgmlType.F32) return Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) out.writeUInt16LE(f32ToF16(t.data[i] ?? 0), i * 2);
  return out;
}

/** Writes a GGUF v3 file with the given metadata (in order) and tensors. */
export function writeGguf(path: string, metadata: Map<string, GgufValue>, tensors: TensorToWrite[]): number {
  const alignValue = metadata.get('general.alignment');
  const alignment = alignValue?.type === GgufType.UINT32 ? Number(alignValue.value) : DEFAULT_ALIGNMENT;
  const head = new Writer();
  head.u32(GGUF_MAGIC);
  head.u32(GGUF_VERSION);
  head.u64(tensors.length);
  head.u64(metadata.size);
  for (const [key, v] of metadata) {
    head.string(key);
    head.value(v);
  }
  const datas = tensors.map(tensorBytes);
  let offset = 0;
  tensors.forEach((t, i) => {
    head.string(t.name);
    head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(t.type);
    head.u64(offset);
    offset = align(offset + (datas[i]?.length ?? 0), alignment);
  });
  head.padTo(alignment);
  const fd = openSync(path, 'w');
  try {
    for (const c of head.chunks) writeSync(fd, c);
    let written = 0;
    for (const d of datas) {
      writeSync(fd, d);
      written += d.length;
      const pad = align(written, alignment) - written;
      if (pad > 0) writeSync(fd, Buffer.alloc(pad));
      written += pad;
    }
    return head.size + written;
  } finally {
    closeSync(fd);
  }
}

/** IEEE 754 binary32 → binary16 bits (round to nearest even; overflow → inf). */
export function f32ToF16(value: number): number {
  const f32 = new Float32Array([value]);
  const bits = new Uint32Array(f32.buffer)[0] ?? 0;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1) === 1)) half++;
  return sign | half;
}
