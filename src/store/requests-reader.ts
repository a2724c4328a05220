import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

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
