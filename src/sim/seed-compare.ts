import type { StageSpec } from '../load/types.js';
import type { RequestRecord } from '../metrics/record.js';
import { quantile } from '../metrics/stats.js';
import type { Workload } from '../workload/types.js';
import type { Calibration } from './calibrate/types.js';
import { type ResolvedSimEngine, type SimEngineOptions, resolveSimEngine } from './create.js';
import { deriveModel } from './catalog/models.js';
import { findModel } from './catalog/index.js';
import { findEngineProfile } from './engine/profiles.js';
import type { SeedGridTable, SeedSweepTable, SeedTable } from './seeds.js';
import { runVirtualStage } from './virtual-runner.js';

/**
 * Assumptions about how the seed tables were measured (documented, not fitted):
 * - grid throughput columns: N = 1000 prompts sent at once (vLLM 0.2 benchmark default);
 * - grid latency columns: one request at a time (Little's law on the published numbers gives 2–40
 *   requests in flight, inconsistent with a 1000-prompt burst), divided by the requested output length;
 * - TGI grid rows stop at EOS: the workload uses the published mean output (output tok/s ÷ req/s);
 * - sweep `throughput` row: a burst of 200 requests; `asynchronous@R`: constant rate R for 60 s.
 */
export const SEED_ASSUMPTIONS = {
  gridBurstRequests: 1000,
  syncRequests: 3,
  sweepBurstRequests: 200,
  sweepAsyncSeconds: 60,
};

export type SeedRole = 'fit' | 'check' | 'excluded';

/**
 * What a figure measures, for error reports: TTFT at one request at a time or low load (`ttft-low`), TTFT
 * under load, ITL/TPOT, output tok/s at saturation (`out-sat`: all-at-once bursts, deep closed loops), output
 * tok/s of one request or a partial load (`out`), requests/s, end-to-end latency.
 */
export type MetricFamily = 'ttft-low' | 'ttft' | 'itl' | 'out-sat' | 'out' | 'reqs' | 'e2e';

export interface SeedMetric {
  metric: string;
  unit: string;
  published: number;
  role: SeedRole;
  note?: string;
  family?: MetricFamily;
  pick: (s: StageSummary) => number;
}

/** One simulated stage and the published figures it is compared with. */
export interface SeedScenario {
  /** Leave-one-table-out group: the seed file ("seed 003") or the public table ("T01"). */
  group?: string;
  table: string;
  row: string;
  engine: SimEngineOptions;
  stage: StageSpec;
  metrics: SeedMetric[];
}

export interface SeedComparisonRow {
  table: string;
  row: string;
  metric: string;
  unit: string;
  published: number;
  predicted: number;
  /** (predicted − published) / published × 100. */
  errorPct: number;
  role: SeedRole;
  note?: string;
}

export interface StageSummary {
  reqPerS: number;
  outTokPerS: number;
  latencyS: number;
  ttftMs: number;
  itlMs: number;
  latPerTokenMs: number;
  latPerOutputTokenMs: number;
  /** Medians over requests (sources that print p50s); itlMedianMs is the median of per-request ITL (a TPOT p50). */
  ttftMedianMs: number;
  itlMedianMs: number;
  /**
   * Every gap between successive tokens of every request, pooled (what vLLM's benchmark_serving and LMDeploy call ITL):
   * their mean (Σ(last − first token) / Σ(tokens − 1)) and their median (computed when first read).
   */
  gapMeanMs: number;
  readonly gapMedianMs: number;
  /** (prompt + output tokens) per second over the stage. */
  totalTokPerS: number;
}

const fixedWorkload = (prompt: number, output: number): Workload => ({
  description: `fixed ${prompt}/${output}`,
  item: () => ({ prompt: '', promptTokens: prompt, promptTokenSource: 'client-tokenizer', outputTokens: output }),
});

/** Median of a multiset given as (value, count) pairs; NaN when empty. */
export function weightedMedian(values: ArrayLike<number>, counts: ArrayLike<number>): number {
  const idx = Array.from({ length: values.length }, (_, i) => i).filter((i) => (counts[i] as number) > 0);
  idx.sort((a, b) => (values[a] as number) - (values[b] as number));
  const n = idx.reduce((a, i) => a + (counts[i] as number), 0);
  if (n === 0) return NaN;
  // The elements at 0-based positions ⌊(n−1)/2⌋ and ⌊n/2⌋, averaged.
  const at = (pos: number): number => {
    let seen = 0;
    for (const i of idx) {
      seen += counts[i] as number;
      if (pos < seen) return values[i] as number;
    }
    return NaN;
  };
  return (at((n - 1) >> 1) + at(n >> 1)) / 2;
}

/** Median of every chunk gap of these records (run only when the figure is read). */
function pooledGapMedian(ok: RequestRecord[]): number {
  let n = 0;
  for (const r of ok) n += r.chunkGapsMs?.length ?? 0;
  if (n === 0) return NaN;
  const all = new Float64Array(n);
  let o = 0;
  for (const r of ok) for (const g of r.chunkGapsMs ?? []) all[o++] = g;
  return quantile(all.sort(), 0.5);
}

/**
 * A stage's figures from its records. `gapMedian` computes the pooled median inter-token gap where the records carry
 * no chunk gaps (the fit's replays); it runs only when `gapMedianMs` is read.
 */
export function summarizeRecords(records: RequestRecord[], gapMedian?: () => number): StageSummary {
  const ok = records.filter((r) => r.status === 'ok' && !r.warmup);
  const mean = (f: (r: RequestRecord) => number | undefined): number => {
    const v = ok.map(f).filter((x): x is number => x !== undefined && Number.isFinite(x));
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : NaN;
  };
  const first = Math.min(...ok.map((r) => r.sentAtMs));
  const last = Math.max(...ok.map((r) => r.endAtMs));
  const dur = (last - first) / 1000;
  const outTok = ok.reduce((a, r) => a + r.outputTokens, 0);
  const promptTok = ok.reduce((a, r) => a + r.promptTokens, 0);
  const median = (f: (r: RequestRecord) => number | undefined): number => {
    const v = ok.map(f).filter((x): x is number => x !== undefined && Number.isFinite(x)).sort((a, b) => a - b);
    if (!v.length) return NaN;
    const m = v.length >> 1;
    return v.length % 2 ? (v[m] as number) : ((v[m - 1] as number) + (v[m] as number)) / 2;
  };
  let gapSum = 0;
  let gaps = 0;
  for (const r of ok) {
    if (r.itlMs === undefined || !Number.isFinite(r.itlMs) || r.outputTokens < 2) continue;
    gapSum += r.itlMs * (r.outputTokens - 1);
    gaps += r.outputTokens - 1;
  }
  let gapMedianMs: number | undefined;
  const summary: Omit<StageSummary, 'gapMedianMs'> = {
    reqPerS: ok.length / dur,
    outTokPerS: outTok / dur,
    latencyS: mean((r) => r.e2eMs) / 1000,
    ttftMs: mean((r) => r.ttftMs),
    itlMs: mean((r) => r.itlMs),
    latPerTokenMs: mean((r) => (r.e2eMs ?? NaN) / (r.requestedPromptTokens + r.requestedOutputTokens)),
    latPerOutputTokenMs: mean((r) => (r.e2eMs ?? NaN) / r.requestedOutputTokens),
    ttftMedianMs: median((r) => r.ttftMs),
    itlMedianMs: median((r) => r.itlMs),
    gapMeanMs: gaps > 0 ? gapSum / gaps : NaN,
    totalTokPerS: (outTok + promptTok) / dur,
  };
  // Sorting every gap of a 3,000-request burst costs more than the rest of its summary: only the figures that use it pay.
  return Object.defineProperty(summary, 'gapMedianMs', {
    enumerable: true,
    get: () => (gapMedianMs ??= gapMedian ? gapMedian() : pooledGapMedian(ok)),
  }) as StageSummary;
}

/**
 * A published vLLM deployment ran, so its max_model_len let vLLM start: where the model's full context does not
 * fit the KV cache (vLLM refuses to start then, limits.ts), the publisher lowered it. The largest power of two
 * that starts and still holds `need` tokens is assumed (a smaller context also shrinks V0's profiling prefill
 * and so leaves more memory to the KV cache). Other engines, and configurations that start as they are, keep
 * their options.
 */
export function startableEngine(engine: SimEngineOptions, need: number): SimEngineOptions {
  const profile = findEngineProfile(engine.engine);
  if (profile.wire !== 'vllm' && profile.wire !== 'vllm-legacy') return engine;
  // KV tokens at a context length; 0 where the weights and the profiling prefill leave no room at all.
  const kvTokens = (e: SimEngineOptions): { kv: number; len: number } => {
    try {
      const d = resolveSimEngine(e).description;
      return { kv: d.kvTokens, len: d.maxModelLen };
    } catch {
      return { kv: 0, len: e.maxModelLen ?? findModel(e.model).spec.maxModelLen };
    }
  };
  const at = kvTokens(engine);
  if (at.kv >= at.len) return engine;
  for (let len = 2 ** Math.floor(Math.log2(at.len - 1)); len >= Math.max(need, 1024); len /= 2) {
    const e = { ...engine, maxModelLen: len };
    if (kvTokens(e).kv >= len) return e;
  }
  return engine;
}

export function seedEngineName(engine: string, version?: string): string {
  const e = engine.toLowerCase();
  if (e.startsWith('vllm')) return version && /^0\.[0-3]\./.test(`${version}.`) ? 'vllm-0.2' : 'vllm-v0';
  if (e.startsWith('tgi') || e.includes('text-generation')) return 'tgi';
  if (e.startsWith('sglang')) return 'sglang';
  if (e.startsWith('lmdeploy')) return 'lmdeploy';
  return e;
}

function gridScenarios(t: SeedGridTable, cal?: Calibration): SeedScenario[] {
  const engineName = seedEngineName(t.engine, t.engineVersion);
  const need = Math.max(...t.rows.map((r) => r.inputLen + r.outputLen));
  const engine = startableEngine({ engine: engineName, model: t.model, gpu: t.gpu, gpus: t.gpus, ...(cal ? { calibration: cal } : {}) }, need);
  const maxLen = resolveSimEngine(engine).description.maxModelLen;
  const table = `${t.model} ${t.gpus}x${t.gpu} ${t.engine} ${t.engineVersion ?? ''}`.trim();
  const out: SeedScenario[] = [];
  for (const r of t.rows) {
    const label = `${r.inputLen}/${r.outputLen}`;
    const out_ = engineName === 'tgi' ? Math.max(1, Math.round(r.outTokPerS / r.reqPerS)) : r.outputLen;
    const excluded = r.inputLen >= maxLen ? `prompt fills max_model_len ${maxLen}` : undefined;
    const role: SeedRole = excluded ? 'excluded' : 'fit';
    const note = excluded ?? (engineName === 'tgi' ? `TGI stops at EOS: ${out_} output tokens assumed` : undefined);
    const n = (x: SeedMetric): SeedMetric => (note ? { ...x, note } : x);
    out.push({
      table, row: label, engine,
      stage: { kind: 'burst', label, limits: { maxRequests: SEED_ASSUMPTIONS.gridBurstRequests }, workload: fixedWorkload(r.inputLen, out_) },
      metrics: [
        n({ metric: 'req/s', unit: 'req/s', published: r.reqPerS, role: engineName === 'tgi' && !excluded ? 'check' : role, pick: (s) => s.reqPerS }),
        n({ metric: 'output tok/s', unit: 'tok/s', published: r.outTokPerS, role: engineName === 'tgi' || excluded ? role : 'check', pick: (s) => s.outTokPerS }),
      ],
    });
    out.push({
      table, row: label, engine,
      stage: { kind: 'closed', concurrency: 1, label, limits: { maxRequests: SEED_ASSUMPTIONS.syncRequests }, workload: fixedWorkload(r.inputLen, out_) },
      metrics: [
        n({ metric: 'latency/token', unit: 'ms', published: r.latPerTokenMs, role: excluded ? 'excluded' : 'check', pick: (s) => s.latPerTokenMs }),
        n({ metric: 'latency/output token', unit: 'ms', published: r.latPerOutputTokenMs, role, pick: (s) => s.latPerOutputTokenMs }),
      ],
    });
  }
  return out;
}

function sweepScenarios(t: SeedSweepTable, cal?: Calibration): SeedScenario[] {
  const engine = startableEngine({
    engine: seedEngineName(t.engine), model: t.model, gpu: t.gpu, gpus: t.gpus, ...(cal ? { calibration: cal } : {}),
  }, t.promptTokens + t.outputTokens);
  const table = `${t.model} ${t.gpus}x${t.gpu} ${t.engine}`;
  const wl = fixedWorkload(t.promptTokens, t.outputTokens);
  // A loaded TTFT below the prefill compute floor (all GPUs at datasheet peak) means prefix-cache hits
  // (e.g. SGLang's radix cache on synthetic prompts): such loaded rows are not fitted.
  const r0 = resolveSimEngine(engine);
  const d = deriveModel(r0.model);
  const m = r0.model;
  const active = m.layers * (d.attnParamsPerLayer + d.mlpParamsPerLayer + (m.moe ? m.moe.activeExperts * 3 * m.hidden * m.moe.expertFfn : 0));
  const floorMs = ((2 * active * t.promptTokens) / (r0.hardware.tflops * 1e12 * t.gpus)) * 1000;
  const cached = t.rows.some((r) => r.kind !== 'synchronous' && r.valid && r.ttftMs < floorMs);
  const cacheNote = `loaded TTFT below the ${floorMs.toFixed(0)} ms prefill floor: prefix caching suspected`;
  return t.rows.map((r) => {
    let stage: StageSpec;
    const fitSet = new Set<string>();
    if (r.kind === 'synchronous') {
      stage = { kind: 'closed', concurrency: 1, label: r.label, limits: { maxRequests: SEED_ASSUMPTIONS.syncRequests }, workload: wl };
      fitSet.add('TTFT').add('ITL');
    } else if (r.kind === 'throughput') {
      stage = { kind: 'burst', label: r.label, limits: { maxRequests: SEED_ASSUMPTIONS.sweepBurstRequests }, workload: wl };
      if (!cached) fitSet.add('output tok/s');
    } else {
      const rate = r.targetRate ?? r.reqPerS;
      stage = {
        kind: 'open', arrival: 'constant', rate, label: r.label,
        limits: { maxRequests: Math.max(20, Math.round(rate * SEED_ASSUMPTIONS.sweepAsyncSeconds)) }, workload: wl,
      };
    }
    const role = (m: string): SeedRole => (!r.valid ? 'excluded' : fitSet.has(m) ? 'fit' : 'check');
    const mk = (metric: string, unit: string, published: number, pick: (s: StageSummary) => number): SeedMetric => ({
      metric, unit, published, role: role(metric), pick,
      ...(r.issue ? { note: r.issue } : cached && r.kind !== 'synchronous' ? { note: cacheNote } : {}),
    });
    const metrics = [
      mk('TTFT', 'ms', r.ttftMs, (s) => s.ttftMs),
      mk('ITL', 'ms', r.itlMs, (s) => s.itlMs),
      mk('output tok/s', 'tok/s', r.outTokPerS, (s) => s.outTokPerS),
      mk('latency', 's', r.latencyS, (s) => s.latencyS),
    ];
    if (r.kind !== 'throughput') metrics.push(mk('req/s', 'req/s', r.reqPerS, (s) => s.reqPerS));
    return { table, row: r.label, engine, stage, metrics };
  });
}

export function seedScenarios(tables: SeedTable[], cal?: Calibration): SeedScenario[] {
  return tables.flatMap((t) =>
    (t.kind === 'grid' ? gridScenarios(t, cal) : sweepScenarios(t, cal)).map((sc) => ({
      ...sc, group: `seed ${t.source.slice(0, 3)}`, metrics: sc.metrics.map((m) => ({ ...m, family: seedFamily(sc, m.metric) })),
    })),
  );
}

function seedFamily(sc: SeedScenario, metric: string): MetricFamily {
  const sync = sc.stage.kind === 'closed' && sc.stage.concurrency === 1;
  if (metric === 'TTFT') return sync ? 'ttft-low' : 'ttft';
  if (metric === 'ITL' || metric === 'latency/output token') return 'itl';
  if (metric === 'output tok/s') return sc.stage.kind === 'burst' ? 'out-sat' : 'out';
  if (metric === 'req/s') return 'reqs';
  return 'e2e';
}

/** Simulate one scenario and return its summary. */
export function simulateScenario(sc: SeedScenario, resolved?: ResolvedSimEngine): StageSummary {
  const r = runVirtualStage(resolved ?? resolveSimEngine(sc.engine), sc.stage, 0, 0, 0, 1);
  return summarizeRecords(r.result.records);
}

/** Predicted vs published for every figure of the given seed tables (what `inferbench predict --seed-file` prints). */
export function compareSeedTables(tables: SeedTable[], opts: { calibration?: Calibration } = {}): SeedComparisonRow[] {
  return compareScenarios(seedScenarios(tables, opts.calibration));
}

/** Predicted vs published for every figure of the given scenarios; one that cannot run gives NaN with the reason. */
export function compareScenarios(scenarios: SeedScenario[], onProgress?: (done: number, total: number) => void): SeedComparisonRow[] {
  const rows: SeedComparisonRow[] = [];
  const cache = new Map<string, ResolvedSimEngine>();
  let done = 0;
  for (const sc of scenarios) {
    if (done > 0) onProgress?.(done, scenarios.length);
    done++;
    const key = JSON.stringify({ ...sc.engine, calibration: undefined });
    let s: StageSummary | undefined;
    let failure: string | undefined;
    try {
      let res = cache.get(key);
      if (!res) {
        res = resolveSimEngine(sc.engine);
        cache.set(key, res);
      }
      s = simulateScenario(sc, res);
    } catch (err) {
      failure = (err as Error).message;
    }
    for (const m of sc.metrics) {
      const predicted = s ? m.pick(s) : NaN;
      const note = failure ?? m.note;
      rows.push({
        table: sc.table, row: sc.row, metric: m.metric, unit: m.unit, published: m.published, predicted,
        errorPct: ((predicted - m.published) / m.published) * 100, role: m.role, ...(note ? { note } : {}),
      });
    }
  }
  return rows;
}
