/**
 * The public tables (data/public-tables/public-tables.json) as simulator scenarios: each row becomes the stage
 * that reproduces its load (all-at-once burst, Poisson rate, closed loop, one request at a time) and the figures
 * it printed, read with the statistic the source reported (mean or median). Assumptions, documented in
 * docs/accuracy.md, are kept here in one place (CORPUS_ASSUMPTIONS).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configError } from '../../core/errors.js';
import type { StageSpec } from '../../load/types.js';
import type { Workload } from '../../workload/types.js';
import { findModel } from '../catalog/registry.js';
import { type MetricFamily, type SeedMetric, type SeedScenario, type StageSummary, startableEngine } from '../seed-compare.js';
import type { SimEngineOptions } from '../create.js';
import {
  type CorpusRow, corpusChunkedPrefill, corpusEngine, corpusKernels, corpusGpu, corpusModelName, corpusQuant, corpusTableId,
} from './corpus-names.js';

export const CORPUS_FILE = fileURLToPath(new URL('../../../data/public-tables/public-tables.json', import.meta.url));

export const CORPUS_ASSUMPTIONS = {
  /** All-at-once bursts larger than this are simulated with this many requests (30,000-prompt runs are steady long before). */
  maxBurstRequests: 3000,
  /** Poisson and closed-loop rows: at most this many requests. */
  maxServedRequests: 1000,
  /** ShareGPT rows without stated totals: the first 320 ShareGPT prompts' means (T20's raw JSON: 73,671 / 71,810 tokens). */
  shareGptMeanIn: 73671 / 320,
  shareGptMeanOut: 71810 / 320,
  /** Log-normal σ of ShareGPT prompt and output lengths around their stated means. */
  shareGptSigma: 0.8,
  /** Fixed-length rows whose output tokens per request (output tok/s ÷ req/s) fall below this share of the requested length stopped at EOS. */
  eosShortfall: 0.85,
  /** Lambda's vLLM runs (T19/T20) and vLLM's CI serving rows: --max-model-len 2000. */
  lambdaMaxModelLen: 2000,
  /**
   * Tables measured by an in-process benchmark, without an HTTP front (no per-request API time): trtllm-bench (T01,
   * T03), LMDeploy's profile_generation / profile_throughput on the TurboMind Python API (T06–T08), Qwen's
   * speed_benchmark_vllm.py on LLM.generate (T09, T10), vLLM's benchmark_throughput (T11) and vLLM CI's latency and
   * offline throughput tests (T22 except its one serving row).
   */
  inProcessTables: ['T01', 'T03', 'T06', 'T07', 'T08', 'T09', 'T10', 'T11', 'T22'],
};

export function loadCorpus(path = CORPUS_FILE): CorpusRow[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw configError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, 'pass a table file in the format of data/public-tables/public-tables.json');
  }
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch (err) {
    throw configError(`${path} is not valid JSON (${(err as Error).message.split('\n')[0]})`, 'pass a table file in the format of data/public-tables/public-tables.json');
  }
  const ok = Array.isArray(rows) && rows.every((r) => typeof r === 'object' && r !== null && 'model' in r && 'load' in r && 'metrics' in r && 'tableGroup' in r);
  if (!ok || !(rows as unknown[]).length) {
    throw configError(`${path}: not a public-table file (expected a JSON array of rows with model, gpu, engine, load, metrics)`, 'see data/public-tables/README.md for the row schema');
  }
  return rows as CorpusRow[];
}

/** Deterministic uniform in (0,1) from an integer (request index). */
function unit(i: number, salt: number): number {
  let h = Math.imul(i ^ salt, 0x9e3779b1) ^ 0x85ebca6b;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296 + 1 / 8589934592;
}

/** A log-normal length with the given mean (Box–Muller on two hashed uniforms). */
function lognormal(i: number, salt: number, mean: number, sigma: number): number {
  const z = Math.sqrt(-2 * Math.log(unit(i, salt))) * Math.cos(2 * Math.PI * unit(i, salt + 7));
  return Math.exp(Math.log(mean) - (sigma * sigma) / 2 + sigma * z);
}

function fixed(prompt: number, output: number): Workload {
  return { description: `fixed ${prompt}/${output}`, item: () => ({ prompt: '', promptTokens: prompt, promptTokenSource: 'client-tokenizer', outputTokens: output }) };
}

/**
 * Fixed prompts whose answers stopped at EOS before the requested length (the row's own output tokens per request fall
 * short of it): each token ends the answer with the same probability q, capped at `maxOut`, q chosen so that the mean
 * is the row's (mean = (1 − (1 − q)^maxOut) / q). Lengths that differ per request keep closed loops from running in
 * lockstep, which is what sets their TTFT.
 */
function eosStopped(prompt: number, maxOut: number, meanOut: number): Workload {
  let lo = 1e-9;
  let hi = 1;
  const mean = (q: number): number => (1 - (1 - q) ** maxOut) / q;
  for (let k = 0; k < 60; k++) {
    const mid = (lo + hi) / 2;
    if (mean(mid) > meanOut) lo = mid;
    else hi = mid;
  }
  const q = (lo + hi) / 2;
  return {
    description: `fixed ${prompt}/≤${maxOut}, mean ${meanOut.toFixed(0)} (EOS)`,
    item: (i) => {
      const o = Math.min(maxOut, Math.max(1, Math.ceil(Math.log(unit(i, 41)) / Math.log(1 - q))));
      return { prompt: '', promptTokens: prompt, promptTokenSource: 'client-tokenizer', outputTokens: o };
    },
  };
}

function shareGpt(meanIn: number, meanOut: number, maxLen: number): Workload {
  const sigma = CORPUS_ASSUMPTIONS.shareGptSigma;
  return {
    description: `ShareGPT-like, mean ${meanIn.toFixed(0)}/${meanOut.toFixed(0)}`,
    item: (i) => {
      const p = Math.max(4, Math.min(Math.round(lognormal(i, 11, meanIn, sigma)), Math.floor(maxLen / 2)));
      const o = Math.max(4, Math.min(Math.round(lognormal(i, 29, meanOut, sigma)), maxLen - p - 1));
      return { prompt: '', promptTokens: p, promptTokenSource: 'client-tokenizer', outputTokens: o };
    },
  };
}

function inProcess(table: string, r: CorpusRow): boolean {
  return CORPUS_ASSUMPTIONS.inProcessTables.includes(table) && !(table === 'T22' && r.load.kind === 'rate');
}

const median = (stat: string | undefined): boolean => stat !== undefined && /median|p50/i.test(stat);

/**
 * Rows at the lowest rate of the sweep a table ran on a deployment (model, GPU, TP, engine, lengths) count as low load.
 * Variants measured at fewer rates (T13's flash-attn, AWQ and KV-int8 runs, at 5 and 8 req/s only) are not low load
 * for starting where their sweep left off: at 5 req/s they are as loaded as their default-configuration twins.
 */
function lowestRates(rows: CorpusRow[]): Map<string, number> {
  const low = new Map<string, number>();
  for (const r of rows) {
    if (r.load.kind !== 'rate') continue;
    const k = configKey(r);
    low.set(k, Math.min(low.get(k) ?? Infinity, Number(r.load.value)));
  }
  return low;
}

const configKey = (r: CorpusRow): string => `${corpusTableId(r)}|${corpusModelName(r)}|${r.gpu}|${r.tp}|${corpusEngine(r)}|${r.inputTokens}|${r.outputTokens}`;

/** The scenarios of the given rows (rows the simulator cannot run come back in `skipped` with the reason). */
export function corpusScenarios(rows: CorpusRow[]): { scenarios: SeedScenario[]; skipped: { row: CorpusRow; reason: string }[] } {
  const scenarios: SeedScenario[] = [];
  const skipped: { row: CorpusRow; reason: string }[] = [];
  const low = lowestRates(rows);
  for (const r of rows) {
    try {
      scenarios.push(rowScenario(r, low));
    } catch (err) {
      skipped.push({ row: r, reason: (err as Error).message });
    }
  }
  return { scenarios, skipped };
}

function rowScenario(r: CorpusRow, low: Map<string, number>): SeedScenario {
  const table = corpusTableId(r);
  const { quant, kvCacheDtype } = corpusQuant(r);
  const model = corpusModelName(r);
  const spec = findModel(model).spec;
  const engineName = corpusEngine(r);
  const lambda = table === 'T19' || table === 'T20';
  const lenNeeded = (r.inputTokens ?? 0) + (r.outputTokens ?? 0);
  const maxModelLen = lambda ? (r.workload.maxModelLen ?? CORPUS_ASSUMPTIONS.lambdaMaxModelLen) : Math.max(spec.maxModelLen, lenNeeded);
  const kernels = corpusKernels(r);
  const options: SimEngineOptions = {
    engine: engineName, model, gpu: corpusGpu(r), gpus: r.tp, quant, maxModelLen,
    ...(kvCacheDtype !== 'auto' ? { kvCacheDtype } : {}),
    // TensorRT-LLM's perf tables: kv_cache_free_gpu_mem_fraction 0.95.
    ...(table === 'T01' || table === 'T03' ? { gpuMemoryUtilization: 0.95 } : {}),
    ...(inProcess(table, r) ? { inProcess: true } : {}),
    ...(corpusChunkedPrefill(r) === false ? { chunkedPrefill: false } : {}),
    ...(kernels ? { kernels } : {}),
  };
  // Lambda states its --max-model-len; elsewhere a vLLM deployment that ran had a context that let it start.
  const engine = lambda ? options : startableEngine(options, lenNeeded);
  const n = r.workload.numRequests;
  let workload: Workload;
  let eosNote: string | undefined;
  const meanOutStated = r.metrics.outputTokPerS && r.metrics.reqPerS ? r.metrics.outputTokPerS / r.metrics.reqPerS : undefined;
  if (r.inputTokens !== null && r.outputTokens !== null) {
    // Outputs that averaged well short of the requested length stopped at EOS (T23: 78% of 128 on every row; elsewhere
    // output tok/s over req/s scatters within ±13% of the requested length).
    if (meanOutStated !== undefined && meanOutStated < CORPUS_ASSUMPTIONS.eosShortfall * r.outputTokens) {
      workload = eosStopped(r.inputTokens, r.outputTokens, meanOutStated);
      eosNote = `outputs stopped at EOS: ${meanOutStated.toFixed(0)} of ${r.outputTokens} tokens a request (output tok/s ÷ req/s)`;
    } else workload = fixed(r.inputTokens, r.outputTokens);
  } else {
    const tin = r.workload.totalInputTokens;
    const tout = r.workload.totalGeneratedTokens;
    let meanIn = CORPUS_ASSUMPTIONS.shareGptMeanIn;
    let meanOut = CORPUS_ASSUMPTIONS.shareGptMeanOut;
    if (tin && tout && n) {
      meanIn = tin / n;
      meanOut = tout / n;
    } else if (r.metrics.totalTokPerS && r.metrics.outputTokPerS && r.metrics.reqPerS && meanOutStated !== undefined) {
      // LMDeploy's ShareGPT rows state total and output tokens/s and requests/s: the mean lengths follow.
      meanOut = meanOutStated;
      meanIn = (r.metrics.totalTokPerS - r.metrics.outputTokPerS) / r.metrics.reqPerS;
    }
    workload = shareGpt(meanIn, meanOut, maxModelLen);
  }
  const label = `#${r.id}`;
  const lv = Number(r.load.value);
  let stage: StageSpec;
  let lowLoad = false;
  let saturated = false;
  if (r.load.kind === 'synchronous') {
    stage = { kind: 'closed', concurrency: 1, label, limits: { maxRequests: 1 }, workload };
    lowLoad = true;
  } else if (r.load.kind === 'throughput' || (table === 'T22' && r.load.kind === 'concurrency')) {
    // T22's latency test is one static batch of `value` sequences sent together.
    const count = r.load.kind === 'concurrency' ? lv : Math.min(n ?? 1000, CORPUS_ASSUMPTIONS.maxBurstRequests);
    stage = { kind: 'burst', label, limits: { maxRequests: count }, workload };
    saturated = r.load.kind === 'throughput';
  } else if (r.load.kind === 'rate') {
    stage = { kind: 'open', arrival: 'poisson', rate: lv, label, limits: { maxRequests: Math.min(n ?? 500, CORPUS_ASSUMPTIONS.maxServedRequests) }, workload };
    lowLoad = low.get(configKey(r)) === lv;
  } else {
    const count = Math.min(n ?? 3 * lv, CORPUS_ASSUMPTIONS.maxServedRequests);
    stage = { kind: 'closed', concurrency: lv, label, limits: { maxRequests: Math.max(count, lv) }, workload };
    lowLoad = lv <= 4;
    saturated = lv >= 64;
  }
  return { group: table, table: `${table} ${model} ${r.tp}x${corpusGpu(r)} ${engineName} ${quant}`, row: rowLabel(r), engine, stage, metrics: rowMetrics(r, lowLoad, saturated, eosNote) };
}

function rowLabel(r: CorpusRow): string {
  const len = r.inputTokens !== null ? `${r.inputTokens}/${r.outputTokens}` : 'ShareGPT';
  const load = r.load.kind === 'synchronous' ? 'sync' : r.load.kind === 'throughput' ? 'burst' : `${r.load.kind}@${r.load.value}`;
  return `#${r.id} ${len} ${load}`;
}

/** The row's figures; `rowNote` (how the row is simulated) joins every figure's own note. */
function rowMetrics(r: CorpusRow, lowLoad: boolean, saturated: boolean, rowNote?: string): SeedMetric[] {
  const out: SeedMetric[] = [];
  const m = r.metrics;
  const st = r.metricStat;
  const add = (metric: string, unit: string, published: number | undefined, family: MetricFamily, pick: (s: StageSummary) => number, fit = true, note?: string): void => {
    if (published === undefined || !(published > 0)) return;
    const notes = [note, rowNote].filter((x) => x !== undefined).join('; ');
    out.push({ metric, unit, published, family, role: fit ? 'fit' : 'check', pick, ...(notes ? { note: notes } : {}) });
  };
  const statNote = (k: string): string | undefined => (st[k] ? `${st[k]}` : undefined);
  add(median(st['ttftMs']) ? 'TTFT p50' : 'TTFT', 'ms', m.ttftMs, lowLoad ? 'ttft-low' : 'ttft', median(st['ttftMs']) ? (s) => s.ttftMedianMs : (s) => s.ttftMs, true, statNote('ttftMs'));
  // TPOT (per request) is what the simulator's per-request ITL is; where both are printed, ITL (a mean over all gaps) is a check.
  const hasTpot = m.tpotMs !== undefined;
  add(median(st['tpotMs']) ? 'TPOT p50' : 'TPOT', 'ms', m.tpotMs, 'itl', median(st['tpotMs']) ? (s) => s.itlMedianMs : (s) => s.itlMs, true, statNote('tpotMs'));
  // ITL as benchmark_serving, TRT-LLM's and LMDeploy's benchmarks print it: over every gap between tokens, pooled.
  add(median(st['itlMs']) ? 'ITL p50' : 'ITL', 'ms', m.itlMs, 'itl', median(st['itlMs']) ? (s) => s.gapMedianMs : (s) => s.gapMeanMs, !hasTpot, statNote('itlMs'));
  const outFamily: MetricFamily = saturated ? 'out-sat' : 'out';
  add('output tok/s', 'tok/s', m.outputTokPerS, outFamily, (s) => s.outTokPerS, true);
  const hasOut = m.outputTokPerS !== undefined;
  add('total tok/s', 'tok/s', m.totalTokPerS, outFamily, (s) => s.totalTokPerS, !hasOut);
  // Below saturation req/s equals the offered rate (no information); with output tok/s it repeats it.
  const reqFit = !hasOut && m.totalTokPerS === undefined;
  add('req/s', 'req/s', m.reqPerS, 'reqs', (s) => s.reqPerS, reqFit);
  add('e2e', 's', m.e2eS, 'e2e', (s) => s.latencyS, true, statNote('e2eS'));
  return out;
}
