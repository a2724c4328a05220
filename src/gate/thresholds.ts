import { configError } from '../core/errors.js';

/**
 * What the gate checks and how much change it tolerates (`--max-regression`). A metric is a per-request latency
 * statistic (`ttft.p50`, `itl.p99`, `e2e.mean`, …), a row's throughput (`output_tps`, `rps`), the run's capacity
 * (`capacity`, capacity runs only) or the error share (`errors`). Latencies regress upwards (+N%), throughputs and
 * capacity downwards (−N%); the error share in percentage points (+N).
 */
export const LATENCIES = ['ttft', 'itl', 'e2e'] as const;
export const LATENCY_STATS = ['mean', 'p50', 'p90', 'p95', 'p99'] as const;
export type Latency = (typeof LATENCIES)[number];
export type LatencyStat = (typeof LATENCY_STATS)[number];

export type GateMetric =
  | { kind: 'latency'; id: string; latency: Latency; stat: LatencyStat }
  | { kind: 'throughput'; id: 'output_tps' | 'rps' }
  | { kind: 'capacity'; id: 'capacity' }
  | { kind: 'errors'; id: 'errors' };

/** A metric with its limit: the largest tolerated change in the bad direction (0.10 = 10%; errors: 0.01 = 1 point). */
export interface Threshold {
  metric: GateMetric;
  limit: number;
}

/** The issue's defaults: TTFT p50 +10%, ITL p50 +5%, output tok/s −5%, req/s −5%, capacity −5%, error share +1 point. */
export const DEFAULT_MAX_REGRESSION = 'ttft.p50=+10%,itl.p50=+5%,output_tps=-5%,rps=-5%,capacity=-5%,errors=+1';

const ALIASES: Record<string, string> = { 'output-tps': 'output_tps', otps: 'output_tps', 'req/s': 'rps', 'error-share': 'errors', median: 'p50' };

/** `ttft.p99` → the metric; undefined when the name is not one. */
export function parseMetricName(name: string): GateMetric | undefined {
  const n = ALIASES[name] ?? name;
  if (n === 'output_tps' || n === 'rps') return { kind: 'throughput', id: n };
  if (n === 'capacity') return { kind: 'capacity', id: 'capacity' };
  if (n === 'errors') return { kind: 'errors', id: 'errors' };
  const [latency, rawStat = 'p50'] = n.split('.');
  const stat = ALIASES[rawStat] ?? rawStat;
  if (!(LATENCIES as readonly string[]).includes(latency ?? '') || !(LATENCY_STATS as readonly string[]).includes(stat)) return undefined;
  return { kind: 'latency', id: `${latency}.${stat}`, latency: latency as Latency, stat: stat as LatencyStat };
}

/** Whether a higher value is the bad direction. */
export const higherIsWorse = (m: GateMetric): boolean => m.kind === 'latency' || m.kind === 'errors';

const KNOWN = `${LATENCIES.map((l) => `${l}.{${LATENCY_STATS.join(',')}}`).join(', ')}, output_tps, rps, capacity, errors`;

/** One `metric=±N%` item (or `metric=off`): the threshold, null for off; pushes a problem and gives undefined when malformed. */
function parseItem(item: string, problems: string[]): Threshold | null | undefined {
  const m = /^([a-z0-9_./-]+)\s*=\s*(.+)$/i.exec(item.trim());
  if (!m) {
    problems.push(`--max-regression item "${item}" is not METRIC=±N% (e.g. ttft.p99=+20%)`);
    return undefined;
  }
  const metric = parseMetricName((m[1] ?? '').toLowerCase());
  if (!metric) {
    problems.push(`--max-regression: unknown metric "${m[1]}" (known: ${KNOWN})`);
    return undefined;
  }
  const value = (m[2] ?? '').trim().toLowerCase();
  if (value === 'off') return null;
  const worse = higherIsWorse(metric) ? '+' : '-';
  if (metric.kind === 'errors') {
    const pts = /^\+?(\d+(?:\.\d+)?)\s*(?:pts?|points?)?$/.exec(value);
    if (!pts) {
      problems.push(`--max-regression errors=${m[2]}: give the error share's rise in percentage points, e.g. errors=+1`);
      return undefined;
    }
    return { metric, limit: Number(pts[1]) / 100 };
  }
  const pct = /^([+-])?(\d+(?:\.\d+)?)\s*%$/.exec(value);
  if (!pct || (pct[1] !== undefined && pct[1] !== worse) || Number(pct[2]) <= 0) {
    const way = worse === '+' ? 'a rise, e.g. +10%' : 'a drop, e.g. -5%';
    const gave = !pct ? `you gave "${m[2]}": write it as a percentage` : Number(pct[2]) <= 0 ? 'you gave 0%: a threshold is above 0' : `you gave a ${pct[1] === '+' ? 'positive' : 'negative'} percentage`;
    problems.push(`--max-regression ${m[1]}=${m[2]}: a regression of ${metric.id} is ${way} (${gave})`);
    return undefined;
  }
  return { metric, limit: Number(pct[2]) / 100 };
}

/**
 * The thresholds in force: the defaults, each overridden (or turned off with `=off`) by the items of `spec`, and any
 * other metric added. Order: the defaults' order, then added metrics in the order given.
 */
export function parseMaxRegression(spec: string | undefined, problems: string[]): Threshold[] {
  const merged = new Map<string, Threshold | null>();
  for (const item of DEFAULT_MAX_REGRESSION.split(',')) {
    const t = parseItem(item, problems);
    if (t) merged.set(t.metric.id, t);
  }
  for (const item of (spec ?? '').split(',').filter((s) => s.trim() !== '')) {
    const m = /^([a-z0-9_./-]+)/i.exec(item.trim());
    const t = parseItem(item, problems);
    if (t === undefined) continue;
    const id = t?.metric.id ?? parseMetricName((m?.[1] ?? '').toLowerCase())?.id ?? '';
    merged.set(id, t);
  }
  const out = [...merged.values()].filter((t): t is Threshold => t !== null);
  if (out.length === 0 && problems.length === 0) problems.push('--max-regression turned every metric off: the gate would check nothing');
  return out;
}

/** `+10%`, `-5%`, `+1 pt`: a threshold as the spec writes it. */
export function thresholdText(t: Threshold): string {
  if (t.metric.kind === 'errors') return `+${fmt(t.limit * 100)} pt`;
  return `${higherIsWorse(t.metric) ? '+' : '-'}${fmt(t.limit * 100)}%`;
}

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(1));

/** Throws the problems as one usage error. */
export function thresholdsOrThrow(spec: string | undefined): Threshold[] {
  const problems: string[] = [];
  const t = parseMaxRegression(spec, problems);
  if (problems.length) throw configError(problems.join('; '), `e.g. --max-regression ttft.p99=+20%,itl.p50=+3% (defaults: ${DEFAULT_MAX_REGRESSION})`);
  return t;
}
