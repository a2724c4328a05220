import type { StageSummary } from '../results/stage.js';
import { walkMeasuredRecords } from '../store/requests-reader.js';
import type { StoredRun } from '../store/run-store.js';

/**
 * The evidence the gate resamples: per row, the measured requests of each run (or each `--repeat` of a run) that
 * went into the row's figures, read back from the run folders' requests.jsonl (warm-up and cool-down left out,
 * as in every table).
 */

/** One run of a row (a run folder, or one repeat of a `--repeat N` run): its measured requests as columns. */
export interface Unit {
  run: string;
  /** Per measured request (ok or failed; cut requests are left out, as the failure share leaves them out). */
  ok: Uint8Array;
  ttft: Float64Array;
  itl: Float64Array;
  e2e: Float64Array;
  outputTokens: Float64Array;
  /** When each request was sent (the run's clock, ms): orders the run's time blocks (run-noise.ts). Absent: file order. */
  sentAt?: Float64Array;
  /** The row's own throughputs (the window's division: the figure the table shows). */
  rps: number;
  outputTps: number;
}

export interface RowSide {
  key: string;
  label: string;
  /** Closed loop and bursts: throughput is set by latency (Little's law); open loop: by the schedule. */
  closed: boolean;
  units: Unit[];
}

/** How rows are matched between runs: their load (concurrency, target rate or grid cell), not their position. */
export function rowKey(s: StageSummary): string {
  const grid = s.grid ? `grid ${s.grid.input}/${s.grid.output} ${s.grid.role}` : '';
  const load = s.concurrency !== undefined ? `c=${s.concurrency}` : s.targetRate !== undefined ? `r=${+s.targetRate.toPrecision(6)}` : '';
  return [s.kind, load, grid, load === '' && grid === '' ? s.label : ''].filter((x) => x !== '').join(' ');
}

interface Collected {
  ok: number[];
  ttft: number[];
  itl: number[];
  e2e: number[];
  out: number[];
  sent: number[];
}

const empty = (): Collected => ({ ok: [], ttft: [], itl: [], e2e: [], out: [], sent: [] });
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : Number.NaN);

function unitOf(run: string, c: Collected, rps: number, outputTps: number): Unit {
  return {
    run,
    ok: Uint8Array.from(c.ok),
    ttft: Float64Array.from(c.ttft),
    itl: Float64Array.from(c.itl),
    e2e: Float64Array.from(c.e2e),
    outputTokens: Float64Array.from(c.out),
    sentAt: Float64Array.from(c.sent),
    rps,
    outputTps,
  };
}

/** A run's rows by key, each with its units (one per repeat), read from its requests.jsonl in one pass. */
export async function readRunRows(run: StoredRun): Promise<Map<string, RowSide>> {
  // stage index → repeat → collected columns
  const byStage = new Map<number, Map<number, Collected>>();
  await walkMeasuredRecords(
    run.dir,
    () => undefined,
    (r) => {
      if (r['warmup'] === true || (r['status'] !== 'ok' && r['status'] !== 'error')) return;
      const stage = num(r['stage']);
      const repeat = typeof r['repeat'] === 'number' ? r['repeat'] : 0;
      let reps = byStage.get(stage);
      if (!reps) byStage.set(stage, (reps = new Map()));
      let c = reps.get(repeat);
      if (!c) reps.set(repeat, (c = empty()));
      const ok = r['status'] === 'ok';
      c.ok.push(ok ? 1 : 0);
      c.ttft.push(ok ? num(r['ttftMs']) : Number.NaN);
      c.itl.push(ok ? num(r['itlMs']) : Number.NaN);
      c.e2e.push(ok ? num(r['e2eMs']) : Number.NaN);
      c.out.push(ok ? num(r['outputTokens']) : Number.NaN);
      c.sent.push(num(r['sentAtMs']));
    },
  );
  const rows = new Map<string, RowSide>();
  for (const s of run.summary.stages) {
    if (s.interrupted) continue;
    const reps = byStage.get(s.index);
    if (!reps || reps.size === 0) continue;
    const units = [...reps.entries()]
      .sort(([a], [b]) => a - b)
      .map(([rep, c]) => {
        const own = s.repeats?.find((r, i) => (r.repeat ?? i) === rep) ?? s;
        return unitOf(reps.size > 1 ? `${run.id}#${rep + 1}` : run.id, c, own.requestThroughput, own.outputTokenThroughput);
      });
    rows.set(rowKey(s), { key: rowKey(s), label: s.label, closed: s.kind !== 'open', units });
  }
  return rows;
}

/** Pools the rows of several runs of one side (repeats): one entry per key with every run's units. */
export function poolSides(perRun: readonly Map<string, RowSide>[]): Map<string, RowSide> {
  const out = new Map<string, RowSide>();
  for (const rows of perRun) {
    for (const [key, row] of rows) {
      const had = out.get(key);
      if (had) had.units.push(...row.units);
      else out.set(key, { ...row, units: [...row.units] });
    }
  }
  return out;
}

/** Measured requests of a side's row (all units). */
export const requestCount = (row: RowSide): number => row.units.reduce((n, u) => n + u.ok.length, 0);
