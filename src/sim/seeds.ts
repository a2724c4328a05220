import { readFileSync } from 'node:fs';
import { configError } from '../core/errors.js';

/** A vLLM-0.2-style grid table (seeds 000/002/004): one row per input/output length pair. */
export interface SeedGridRow {
  inputLen: number;
  outputLen: number;
  reqPerS: number;
  outTokPerS: number;
  latPerTokenMs: number;
  latPerOutputTokenMs: number;
}

export interface SeedGridTable {
  kind: 'grid';
  source: string;
  model: string;
  gpu: string;
  gpus: number;
  /** Engine name as printed, e.g. "vllm", "tgi". */
  engine: string;
  engineVersion?: string;
  rows: SeedGridRow[];
}

/** A GuideLLM-style sweep row (seed 003). */
export interface SeedSweepRow {
  label: string;
  kind: 'synchronous' | 'asynchronous' | 'throughput';
  targetRate?: number;
  reqPerS: number;
  latencyS: number;
  ttftMs: number;
  itlMs: number;
  outTokPerS: number;
  /** False for rows that should not be trusted (all zeros, out of order, achieved > target). */
  valid: boolean;
  issue?: string;
}

export interface SeedSweepTable {
  kind: 'sweep';
  source: string;
  model: string;
  gpu: string;
  gpus: number;
  engine: string;
  promptTokens: number;
  outputTokens: number;
  rows: SeedSweepRow[];
}

export type SeedTable = SeedGridTable | SeedSweepTable;

const cells = (line: string): string[] => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
const numIn = (s: string): number => {
  const m = /-?\d+(?:\.\d+)?/.exec(s);
  return m ? Number(m[0]) : NaN;
};

const SWEEP_HEADER =
  /^\s*-\s*\*\*(.+?)\*\*\s*,\s*\*\*(\d+)\*\*\s*张\s*\*\*(.+?)\*\*\s*,\s*(?:\*\*)?([^,*]+?)(?:\*\*)?\s*,\s*prompt_tokens\s*=\s*(\d+)\s*,\s*generated_tokens\s*=\s*(\d+)/;

/** Parse a seed markdown file's grid and sweep tables. Unrecognised lines are skipped. */
export function parseSeedText(text: string, source = 'seed'): SeedTable[] {
  const out: SeedTable[] = [];
  let model = '';
  let gpu = '';
  let engine = '';
  let engineVersion: string | undefined;
  let grid: SeedGridTable | undefined;
  let sweep: SeedSweepTable | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trimEnd();
    const h1 = /^#\s+(.+)$/.exec(line);
    const h2 = /^##\s+(.+)$/.exec(line);
    const sh = SWEEP_HEADER.exec(line);
    if (h1?.[1]) {
      model = h1[1].trim();
      grid = sweep = undefined;
    } else if (h2?.[1]) {
      const t = h2[1].trim();
      grid = sweep = undefined;
      const ev = /^([A-Za-z][\w.-]*)\s+v?(\d+(?:\.\d+)*)$/.exec(t);
      if (ev?.[1] && ev[2] && !/^(a|h|l)\d+/i.test(ev[1]) && !/^rtx/i.test(ev[1])) {
        engine = ev[1].toLowerCase();
        engineVersion = ev[2];
      } else if (/\d/.test(t) && /^(A|H|L|RTX)/i.test(t)) {
        gpu = t;
      }
    } else if (sh) {
      sweep = {
        kind: 'sweep', source, model: (sh[1] ?? '').trim(), gpus: Number(sh[2]), gpu: (sh[3] ?? '').trim(),
        engine: (sh[4] ?? '').trim(), promptTokens: Number(sh[5]), outputTokens: Number(sh[6]), rows: [],
      };
      grid = undefined;
      out.push(sweep);
    } else if (line.trim().startsWith('|')) {
      const c = cells(line);
      if (c.every((x) => /^:?-+:?$/.test(x))) continue;
      if (/input length/i.test(c[0] ?? '')) {
        grid = { kind: 'grid', source, model, gpu, gpus: 1, engine, ...(engineVersion ? { engineVersion } : {}), rows: [] };
        out.push(grid);
        continue;
      }
      if (/benchmark/i.test(c[0] ?? '')) continue;
      if (grid && c.length >= 6) {
        const v = c.map(numIn);
        if (v.slice(0, 6).every((x) => Number.isFinite(x))) {
          grid.rows.push({
            inputLen: v[0] as number, outputLen: v[1] as number, reqPerS: v[2] as number, outTokPerS: v[3] as number,
            latPerTokenMs: v[4] as number, latPerOutputTokenMs: v[5] as number,
          });
        }
      } else if (sweep && c.length >= 6) {
        const label = c[0] ?? '';
        const kind = /^sync/i.test(label) ? 'synchronous' : /^throughput/i.test(label) ? 'throughput' : 'asynchronous';
        const rate = /@\s*([\d.]+)/.exec(label);
        sweep.rows.push({
          label, kind, ...(rate?.[1] ? { targetRate: Number(rate[1]) } : {}),
          reqPerS: numIn(c[1] ?? ''), latencyS: numIn(c[2] ?? ''), ttftMs: numIn(c[3] ?? ''), itlMs: numIn(c[4] ?? ''),
          outTokPerS: numIn(c[5] ?? ''), valid: true,
        });
      }
    }
  }
  for (const t of out) if (t.kind === 'sweep') flagSweepRows(t.rows);
  return out.filter((t) => t.rows.length > 0);
}

/** Mark garbage rows: all zeros, async rows outside the longest increasing run of target rates, achieved > target. */
function flagSweepRows(rows: SeedSweepRow[]): void {
  for (const r of rows) {
    if (![r.reqPerS, r.latencyS, r.ttftMs, r.itlMs, r.outTokPerS].every((x) => Number.isFinite(x) && x > 0)) {
      r.valid = false;
      r.issue = 'zero or unreadable row';
    }
  }
  const asyncRows = rows.filter((r) => r.kind === 'asynchronous' && r.valid && r.targetRate !== undefined);
  const keep = longestIncreasing(asyncRows.map((r) => r.targetRate as number));
  asyncRows.forEach((r, i) => {
    if (!keep.has(i)) {
      r.valid = false;
      r.issue = 'out of order';
    } else if (r.reqPerS > (r.targetRate as number) * 1.05) {
      r.valid = false;
      r.issue = 'achieved rate above target';
    }
  });
}

function longestIncreasing(xs: number[]): Set<number> {
  const len = xs.map(() => 1);
  const prev = xs.map(() => -1);
  for (let i = 0; i < xs.length; i++) {
    for (let j = 0; j < i; j++) {
      if ((xs[j] as number) < (xs[i] as number) && (len[j] as number) + 1 > (len[i] as number)) {
        len[i] = (len[j] as number) + 1;
        prev[i] = j;
      }
    }
  }
  let best = 0;
  for (let i = 0; i < xs.length; i++) if ((len[i] as number) > (len[best] as number)) best = i;
  const keep = new Set<number>();
  for (let i = xs.length ? best : -1; i >= 0; i = prev[i] as number) keep.add(i);
  return keep;
}

export function parseSeedFile(path: string): SeedTable[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw configError(`cannot read seed file ${path}: ${(err as Error).message}`);
  }
  const tables = parseSeedText(text, path.replace(/^.*\//, ''));
  if (!tables.length) throw configError(`${path}: no grid or sweep tables found`);
  return tables;
}
