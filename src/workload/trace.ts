import { extname } from 'node:path';
import { configError } from '../core/errors.js';
import { parseCsv } from './csv.js';
import { numberedLines, Problems, readInput } from './problems.js';

export interface TraceEntry {
  /** Send time relative to the first entry, already multiplied by the time scale. */
  offsetMs: number;
  inputTokens: number;
  outputTokens: number;
  /** Mooncake block hashes: equal ids mean equal prompt blocks (shared prefixes). */
  hashIds?: number[];
  /** Session traces (AIPerf's `session_id`): rows of one session are the turns of one conversation, in file order. */
  session?: string;
  /** A later turn goes this long after the previous turn's reply (AIPerf's `delay`, ms; already time-scaled). */
  delayMs?: number;
  /** 1-based line in the trace file. */
  line: number;
}

export interface TraceOptions {
  /** Multiplies every gap: 0.5 replays twice as fast, 2 half as fast (default 1). */
  timeScale?: number;
  /** Default: .csv ⇒ csv, otherwise JSONL. */
  format?: 'jsonl' | 'csv';
}

const HINT =
  'trace rows: JSONL {"timestamp": ms, "input_length": N, "output_length": N, "hash_ids": [..], "session_id": S, "delay": ms} or CSV TIMESTAMP,ContextTokens,GeneratedTokens';

type Raw = { t: number; inputTokens: number; outputTokens: number; hashIds?: number[]; session?: string; delayMs?: number; line: number };

/** Mooncake-style JSONL or Azure LLM inference CSV traces, sorted by time, offsets relative to the first entry. */
export async function loadTrace(path: string, opts: TraceOptions = {}): Promise<TraceEntry[]> {
  const scale = opts.timeScale ?? 1;
  if (!(scale > 0) || !Number.isFinite(scale)) throw configError(`--time-scale ${scale}: must be a number > 0`);
  const text = await readInput(path, 'trace');
  const problems = new Problems(path);
  const format = opts.format ?? (extname(path).toLowerCase() === '.csv' ? 'csv' : 'jsonl');
  const rows = format === 'csv' ? readCsvTrace(text, problems) : readJsonlTrace(text, problems);
  problems.throwIfAny(HINT);
  if (rows.length === 0) {
    problems.add(1, 'no trace rows');
    problems.throwIfAny(HINT);
  }
  // Stable sort: rows with equal timestamps keep file order. A session's later turns keep their place after its first
  // (their send time is the previous reply + delay, known only while replaying).
  rows.sort((a, b) => a.t - b.t || a.line - b.line);
  const t0 = (rows[0] as Raw).t;
  return rows.map((r) => ({
    offsetMs: (r.t - t0) * scale,
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    ...(r.hashIds ? { hashIds: r.hashIds } : {}),
    ...(r.session !== undefined ? { session: r.session } : {}),
    ...(r.delayMs !== undefined ? { delayMs: r.delayMs * scale } : {}),
    line: r.line,
  }));
}

const count = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;

function readJsonlTrace(text: string, problems: Problems): Raw[] {
  const rows: Raw[] = [];
  /** Session id → its first row's timestamp: later turns take it (they are sent after the previous reply). */
  const sessionStart = new Map<string, number>();
  for (const { line, text: t } of numberedLines(text)) {
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch {
      problems.add(line, 'not valid JSON');
      continue;
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      problems.add(line, 'expected a JSON object');
      continue;
    }
    const o = v as Record<string, unknown>;
    const wrong: string[] = [];
    const sid = o['session_id'];
    const session = typeof sid === 'string' || (typeof sid === 'number' && Number.isFinite(sid)) ? String(sid) : undefined;
    if (sid !== undefined && session === undefined) wrong.push('"session_id" must be a string or a number');
    const laterTurn = session !== undefined && sessionStart.has(session);
    const ts = o['timestamp'] ?? (laterTurn ? sessionStart.get(session as string) : undefined);
    if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0) wrong.push(session !== undefined ? '"timestamp" (ms) must be a number ≥ 0 on the first row of a session' : '"timestamp" (ms) must be a number ≥ 0');
    const delay = o['delay'];
    if (delay !== undefined && !(typeof delay === 'number' && Number.isFinite(delay) && delay >= 0)) wrong.push('"delay" (ms after the previous reply) must be a number ≥ 0');
    if (!count(o['input_length'])) wrong.push('"input_length" must be a whole number ≥ 1');
    if (!count(o['output_length'])) wrong.push('"output_length" must be a whole number ≥ 1');
    const h = o['hash_ids'];
    const hashOk = h === undefined || (Array.isArray(h) && h.every((x) => Number.isInteger(x)));
    if (!hashOk) wrong.push('"hash_ids" must be an array of integers');
    if (wrong.length > 0) {
      problems.add(line, wrong.join('; '));
      continue;
    }
    if (session !== undefined && !laterTurn) sessionStart.set(session, ts as number);
    rows.push({
      t: ts as number,
      inputTokens: o['input_length'] as number,
      outputTokens: o['output_length'] as number,
      ...(Array.isArray(h) ? { hashIds: h as number[] } : {}),
      ...(session !== undefined ? { session } : {}),
      ...(typeof delay === 'number' ? { delayMs: delay } : {}),
      line,
    });
  }
  return rows;
}

function readCsvTrace(text: string, problems: Problems): Raw[] {
  const { records, errors } = parseCsv(text);
  for (const e of errors) problems.add(e.line, e.message);
  const [header, ...data] = records;
  if (!header) {
    problems.add(1, 'empty CSV');
    return [];
  }
  const names = header.fields.map((f) => f.trim().toLowerCase());
  const col = (name: string) => names.indexOf(name.toLowerCase());
  const [ti, ci, gi] = [col('TIMESTAMP'), col('ContextTokens'), col('GeneratedTokens')];
  if (ti < 0 || ci < 0 || gi < 0) {
    problems.add(header.line, `needs columns TIMESTAMP, ContextTokens, GeneratedTokens (found: ${header.fields.join(', ')})`);
    return [];
  }
  const rows: Raw[] = [];
  for (const r of data) {
    const t = parseTimestamp((r.fields[ti] ?? '').trim());
    const ctx = Number((r.fields[ci] ?? '').trim());
    const gen = Number((r.fields[gi] ?? '').trim());
    const wrong: string[] = [];
    if (t === undefined) wrong.push(`TIMESTAMP ${JSON.stringify(r.fields[ti] ?? '')} is not a date-time`);
    if (!count(ctx)) wrong.push('ContextTokens must be a whole number ≥ 1');
    if (!count(gen)) wrong.push('GeneratedTokens must be a whole number ≥ 1');
    if (wrong.length > 0) problems.add(r.line, wrong.join('; '));
    else rows.push({ t: t as number, inputTokens: ctx, outputTokens: gen, line: r.line });
  }
  return rows;
}

/** `2023-11-16 18:15:46.6805900` (UTC unless an offset is given) in ms, keeping sub-ms digits. */
export function parseTimestamp(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return undefined;
  let ms = Date.UTC(y, mo - 1, d, h, mi, se) + (m[7] ? Number(`0.${m[7]}`) * 1000 : 0);
  const tz = m[8];
  if (tz && tz.toUpperCase() !== 'Z') {
    const sign = tz.startsWith('-') ? -1 : 1;
    const digits = tz.slice(1).replace(':', '');
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  return ms;
}
