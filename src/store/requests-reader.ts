import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** Per-request values of one run, sampled for distribution charts. */
export interface RequestSample {
  ttftMs: number[];
  itlMs: number[];
  e2eMs: number[];
  /** Measured (non-warm-up) requests read. */
  total: number;
  ok: number;
  /** "CODE: message" → count, for the failures table. */
  errors: Map<string, number>;
  /** Lines that were not JSON (a run killed mid-write leaves a torn last line). */
  badLines: number;
  /** Values kept per metric when the run had more requests than the sample size. */
  sampled: boolean;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Streams requests.jsonl line by line (runs can hold millions of records with their chunk gaps) and keeps a
 * deterministic reservoir of at most `limit` values per metric, so the same run always draws the same charts.
 */
export async function readRequestSample(dir: string, limit = 2000): Promise<RequestSample> {
  const out: RequestSample = { ttftMs: [], itlMs: [], e2eMs: [], total: 0, ok: 0, errors: new Map(), badLines: 0, sampled: false };
  let seed = 0x9e3779b9;
  const rand = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const seen = { ttftMs: 0, itlMs: 0, e2eMs: 0 };
  const keep = (name: keyof typeof seen, v: unknown): void => {
    if (!finite(v)) return;
    const arr = out[name];
    const n = ++seen[name];
    if (arr.length < limit) arr.push(v);
    else {
      out.sampled = true;
      const j = Math.floor(rand() * n);
      if (j < limit) arr[j] = v;
    }
  };
  const tally = await walkMeasuredRecords(dir, (r) => {
    keep('ttftMs', r['ttftMs']);
    keep('itlMs', r['itlMs']);
    keep('e2eMs', r['e2eMs']);
  });
  Object.assign(out, tally);
  return out;
}

/** What a pass over requests.jsonl counted: measured requests, successes, failures by "CODE: message", torn lines. */
export interface RecordTally {
  total: number;
  ok: number;
  errors: Map<string, number>;
  badLines: number;
}

/**
 * One streaming pass over a run's requests.jsonl (runs can hold millions of records with their chunk gaps):
 * warm-up requests are left out, as in every table; each successful record goes to `onOk`; failures are counted by
 * their message. A missing file reads as no requests.
 */
export async function walkMeasuredRecords(
  dir: string,
  onOk: (record: Record<string, unknown>) => void,
  /** Every record, warm-up included, before it is counted (timelines need the ramp too). */
  onEvery?: (record: Record<string, unknown>) => void,
): Promise<RecordTally> {
  const out: RecordTally = { total: 0, ok: 0, errors: new Map(), badLines: 0 };
  const path = join(dir, 'requests.jsonl');
  if (!existsSync(path)) return out;
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(line) as Record<string, unknown>;
    } catch {
      out.badLines++;
      continue;
    }
    onEvery?.(r);
    if (r['warmup'] === true) continue;
    out.total++;
    if (r['status'] === 'ok') {
      out.ok++;
      onOk(r);
    } else {
      const key = failureText(r);
      out.errors.set(key, (out.errors.get(key) ?? 0) + 1);
    }
  }
  return out;
}

/** "CODE: message" of a failed or cut request record, as the failures tables write it. */
export function failureText(r: Record<string, unknown>): string {
  const e = (r['error'] ?? {}) as { code?: unknown; message?: unknown };
  return `${String(e.code ?? r['status'])}: ${String(e.message ?? '')}`.slice(0, 500);
}
