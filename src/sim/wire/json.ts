/**
 * Serializer flavours the engines use (wire-formats.md §0). Byte-exactness matters because clients and
 * fingerprinting look at separators and escapes.
 */

const NON_ASCII = /[\u007f-\uffff]/g;
const GO_UNSAFE = /[<>&\u2028\u2029]/g;

function hex4(c: string): string {
  return '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
}

/** A JSON string literal as Python's json.dumps writes it (ensure_ascii: every non-ASCII char as \uXXXX, lowercase). */
export function pyString(s: string): string {
  // JSON.stringify already escapes controls like Python; DEL and non-ASCII are what differ
  return JSON.stringify(s).replace(NON_ASCII, hex4);
}

/**
 * Python `json.dumps(value)` with default separators (", " and ": "). Integers and non-integral numbers
 * print like JS; callers needing Python's "1.0" for integral floats pass a PyFloat.
 */
export function pyDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return pyString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : value > 0 ? 'Infinity' : value < 0 ? '-Infinity' : 'NaN';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof PyFloat) return value.toString();
  if (Array.isArray(value)) return '[' + value.map(pyDumps).join(', ') + ']';
  if (typeof value === 'object') {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      parts.push(pyString(k) + ': ' + pyDumps(v));
    }
    return '{' + parts.join(', ') + '}';
  }
  return 'null';
}

/** A float that must print with a decimal point (Python repr, rapidjson, nlohmann: 0.0 not 0). */
export class PyFloat {
  constructor(readonly value: number) {}
  toString(): string {
    return Number.isInteger(this.value) ? this.value.toFixed(1) : String(this.value);
  }
  toJSON(): number {
    return this.value;
  }
}

/** A float literal with a decimal point, for hand-built frames (rapidjson / nlohmann / Python style). */
export function floatLit(v: number): string {
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

/** Go encoding/json: compact, with <, >, & and U+2028/2029 escaped. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(GO_UNSAFE, hex4);
}

/** A Go-escaped JSON string literal. */
export function goString(s: string): string {
  return JSON.stringify(s).replace(GO_UNSAFE, hex4);
}

/** JSON with every object's keys sorted (Triton builds responses from a std::map). */
export function sortedJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof PyFloat) return value.toString();
  if (Array.isArray(value)) return '[' + value.map(sortedJson).join(',') + ']';
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + sortedJson(obj[k])).join(',') + '}';
}

/** Compact JSON that honours PyFloat (keeps "0.0"). */
export function compactJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof PyFloat) return value.toString();
  if (Array.isArray(value)) return '[' + value.map(compactJson).join(',') + ']';
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    if (v === undefined) continue;
    parts.push(JSON.stringify(k) + ':' + compactJson(v));
  }
  return '{' + parts.join(',') + '}';
}
