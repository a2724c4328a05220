import type { Slo, StageSummary } from '../metrics/summary.js';
import type { StoredRun } from '../store/run-store.js';
import type { Table } from './table.js';

export interface Point {
  x: number;
  y: number;
}

/** Linear interpolation between the two rows around x (rows sorted by x); undefined outside the measured range. */
export function interpolateAt(points: readonly Point[], x: number): number | undefined {
  const ps = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
  for (let i = 0; i < ps.length; i++) {
    const a = ps[i] as Point;
    if (a.x === x) return a.y;
    const b = ps[i + 1];
    if (b && a.x < x && x <= b.x) return b.x === a.x ? b.y : a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x);
  }
  return undefined;
}

const okRows = (run: StoredRun): StageSummary[] => run.summary.stages.filter((s) => s.requests.ok > 0);
/** Rows at a steady offered load: a burst ("throughput") row has no rate to match. */
const loadRows = (run: StoredRun): StageSummary[] => okRows(run).filter((s) => s.kind !== 'burst');

/** A row meets the SLO when every given limit holds at p99 and no request failed. */
export function meetsSlo(s: StageSummary, slo: Slo): boolean {
  const within = (limit: number | undefined, p99: number | undefined): boolean => limit === undefined || (p99 !== undefined && p99 <= limit);
  return (
    s.requests.errors === 0 &&
    within(slo.ttftMs, s.metrics.ttftMs?.p99) &&
    within(slo.itlMs, s.metrics.itlMs?.p99) &&
    within(slo.e2eMs, s.metrics.e2eMs?.p99)
  );
}

export function sloText(slo: Slo): string {
  const parts: string[] = [];
  if (slo.ttftMs !== undefined) parts.push(`TTFT p99 ≤ ${slo.ttftMs} ms`);
  if (slo.itlMs !== undefined) parts.push(`ITL p99 ≤ ${slo.itlMs} ms`);
  if (slo.e2eMs !== undefined) parts.push(`E2E p99 ≤ ${slo.e2eMs} ms`);
  return parts.join(', ');
}

/** USD per 1M output tokens when every GPU of the run is billed for the whole hour. */
export function costPerMillion(pricePerGpuHour: number, gpus: number, outputTokensPerS: number): number | undefined {
  return outputTokensPerS > 0 ? (pricePerGpuHour * gpus * 1e6) / (outputTokensPerS * 3600) : undefined;
}

export interface VerdictOptions {
  slo?: Slo;
  gpuHourPrice?: number;
}

export interface RunVerdict {
  series: string;
  saturation?: { tokensPerS: number; row: string };
  sloRate?: { requestsPerS: number; row: string } | null;
  ttftAtCommon?: number;
  itlAtCommon?: number;
  costPerMillion?: number;
}

export interface Verdict {
  /** The highest achieved request rate every run reached (sweeps). */
  commonRate?: number;
  runs: RunVerdict[];
  table: Table;
  /** The short verdict, one sentence a line. */
  lines: string[];
}

const f = (n: number | undefined, d = 2): string => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(d));
const pct = (a: number, b: number): string => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`;

export function computeVerdict(runs: readonly StoredRun[], names: readonly string[], opts: VerdictOptions): Verdict {
  const maxes = runs.map((r) => Math.max(...loadRows(r).map((s) => s.requestThroughput)));
  const mins = runs.map((r) => Math.min(...loadRows(r).map((s) => s.requestThroughput)));
  const top = Math.min(...maxes);
  const commonRate = Number.isFinite(top) && top >= Math.max(...mins) ? top : undefined;

  const verdicts: RunVerdict[] = runs.map((run, i) => {
    const v: RunVerdict = { series: names[i] ?? run.id };
    const best = okRows(run).reduce<StageSummary | undefined>((b, s) => (!b || s.outputTokenThroughput > b.outputTokenThroughput ? s : b), undefined);
    if (best) v.saturation = { tokensPerS: best.outputTokenThroughput, row: best.label };
    if (opts.slo) {
      const meeting = loadRows(run).filter((s) => meetsSlo(s, opts.slo as Slo));
      const hi = meeting.reduce<StageSummary | undefined>((b, s) => (!b || s.requestThroughput > b.requestThroughput ? s : b), undefined);
      v.sloRate = hi ? { requestsPerS: hi.requestThroughput, row: hi.label } : null;
    }
    if (commonRate !== undefined) {
      const pts = (pick: (s: StageSummary) => number | undefined): Point[] =>
        loadRows(run).map((s) => ({ x: s.requestThroughput, y: pick(s) ?? Number.NaN }));
      const ttft = interpolateAt(pts((s) => s.metrics.ttftMs?.mean), commonRate);
      const itl = interpolateAt(pts((s) => s.metrics.itlMs?.mean), commonRate);
      if (ttft !== undefined) v.ttftAtCommon = ttft;
      if (itl !== undefined) v.itlAtCommon = itl;
    }
    if (opts.gpuHourPrice !== undefined && best) {
      const c = costPerMillion(opts.gpuHourPrice, run.summary.context.gpus ?? 1, best.outputTokenThroughput);
      if (c !== undefined) v.costPerMillion = c;
    }
    return v;
  });

  const at = commonRate !== undefined ? ` @ ${f(commonRate)} req/s` : ' (no common rate)';
  const headers = ['Run', 'Output tok/s at saturation', `TTFT mean${at}`, `ITL mean${at}`];
  if (opts.slo) headers.splice(1, 0, `Highest req/s meeting SLO`);
  if (opts.gpuHourPrice !== undefined) headers.push(`$ per 1M output tokens (at $${opts.gpuHourPrice}/GPU-hour)`);
  const rows = verdicts.map((v, i) => {
    const run = runs[i] as StoredRun;
    const row = [
      v.series,
      v.saturation ? `${f(v.saturation.tokensPerS)} (${v.saturation.row})` : 'no request completed',
      `${f(v.ttftAtCommon)} ms`,
      `${f(v.itlAtCommon)} ms`,
    ];
    if (opts.slo) row.splice(1, 0, v.sloRate ? `${f(v.sloRate.requestsPerS)} (${v.sloRate.row})` : 'none');
    if (opts.gpuHourPrice !== undefined) row.push(v.costPerMillion !== undefined ? `$${f(v.costPerMillion, 3)} (${run.summary.context.gpus ?? 1} GPU)` : '—');
    return row;
  });
  return { ...(commonRate !== undefined ? { commonRate } : {}), runs: verdicts, table: { headers, rows }, lines: verdictLines(verdicts, commonRate, opts) };
}

function leader<T>(items: readonly T[], score: (t: T) => number | undefined, higherIsBetter: boolean): [T, T] | undefined {
  const scored = items.filter((t) => Number.isFinite(score(t) ?? Number.NaN)).sort((a, b) => ((score(b) as number) - (score(a) as number)) * (higherIsBetter ? 1 : -1));
  return scored.length >= 2 ? [scored[0] as T, scored[1] as T] : undefined;
}

function verdictLines(vs: readonly RunVerdict[], commonRate: number | undefined, opts: VerdictOptions): string[] {
  const lines: string[] = [];
  const sat = leader(vs, (v) => v.saturation?.tokensPerS, true);
  if (sat) {
    const [a, b] = sat as [Required<Pick<RunVerdict, 'saturation'>> & RunVerdict, Required<Pick<RunVerdict, 'saturation'>> & RunVerdict];
    lines.push(`Most output tokens/s at saturation: ${a.series} — ${f(a.saturation.tokensPerS)} tok/s, ${pct(a.saturation.tokensPerS, b.saturation.tokensPerS)} over ${b.series}.`);
  }
  if (opts.slo) {
    const s = leader(vs, (v) => v.sloRate?.requestsPerS, true);
    const only = vs.filter((v) => v.sloRate);
    if (s) lines.push(`Highest load within the SLO (${sloText(opts.slo)}): ${s[0].series} at ${f(s[0].sloRate?.requestsPerS)} req/s (next: ${s[1].series} at ${f(s[1].sloRate?.requestsPerS)}).`);
    else if (only.length === 1) lines.push(`Only ${only[0]?.series} meets the SLO (${sloText(opts.slo)}) at any measured rate: ${f(only[0]?.sloRate?.requestsPerS)} req/s.`);
    else if (only.length === 0) lines.push(`No run meets the SLO (${sloText(opts.slo)}) at any measured rate.`);
  }
  if (commonRate !== undefined) {
    const t = leader(vs, (v) => v.ttftAtCommon, false);
    const l = leader(vs, (v) => v.itlAtCommon, false);
    if (t) lines.push(`At ${f(commonRate)} req/s (the highest rate every run reached): lowest TTFT ${t[0].series} (${f(t[0].ttftAtCommon)} ms vs ${f(t[1].ttftAtCommon)} ms).`);
    if (l) lines.push(`At ${f(commonRate)} req/s: lowest ITL ${l[0].series} (${f(l[0].itlAtCommon)} ms vs ${f(l[1].itlAtCommon)} ms).`);
  }
  const c = leader(vs, (v) => v.costPerMillion, false);
  if (c) lines.push(`Cheapest per output token: ${c[0].series} at $${f(c[0].costPerMillion, 3)} per 1M (vs $${f(c[1].costPerMillion, 3)}).`);
  return lines;
}
