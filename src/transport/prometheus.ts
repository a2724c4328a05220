import type { ServerTelemetry } from '../results/stage.js';

/** What a server's Prometheus /metrics says about its own load, in engine-neutral terms. */
export interface ServerSample {
  atMs: number;
  running?: number;
  waiting?: number;
  /** KV-cache usage, 0..1. */
  kvUsage?: number;
  preemptionsTotal?: number;
  /** Prefix-cache counters (tokens): hits and queries since the server started (vLLM V1). */
  prefixCacheHitsTotal?: number;
  prefixCacheQueriesTotal?: number;
  /** A prefix-cache hit-rate gauge, 0..1 (SGLang `cache_hit_rate`, vLLM V0 `gpu_prefix_cache_hit_rate`). */
  prefixCacheHitRate?: number;
  /** Speculative decoding counters since the server started: draft tokens proposed and accepted (vLLM). */
  specDraftTokensTotal?: number;
  specAcceptedTokensTotal?: number;
  /** Read at a row's start or end (an idle server): its counters count, its gauges do not. */
  edge?: true;
}

type Series = Array<{ labels: Record<string, string>; value: number }>;

/**
 * Prometheus text format: `name{label="value",…} value [timestamp]`. Label values may hold any character, with
 * `\\`, `\"` and `\n` escaped (so a `}` or `"` inside a value does not end it). Comments, malformed lines and
 * values that are not finite numbers are skipped.
 */
export function parsePrometheus(text: string, names?: ReadonlySet<string>): Map<string, Series> {
  const out = new Map<string, Series>();
  for (let from = 0; from < text.length; ) {
    let to = text.indexOf('\n', from);
    if (to === -1) to = text.length;
    const start = from;
    from = to + 1;
    // `names`: only these series are read (an engine's /metrics is mostly histogram buckets nobody here reads),
    // told by the name at the line's start before the line is cut out of the body.
    if (names && !names.has(lineName(text, start, to))) continue;
    const line = text.slice(start, to).trim();
    if (line === '' || line.startsWith('#')) continue;
    const sample = parseSampleLine(line);
    if (!sample) continue;
    let series = out.get(sample.name);
    if (!series) out.set(sample.name, (series = []));
    series.push({ labels: sample.labels, value: sample.value });
  }
  return out;
}

/** The metric name text[from, to) starts with, after any blanks: everything before its labels or its value. */
function lineName(text: string, from: number, to: number): string {
  let i = from;
  while (i < to && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
  const start = i;
  while (i < to) {
    const c = text.charCodeAt(i);
    if (c === 123 /* { */ || c === 32 || c === 9 || c === 13) break;
    i++;
  }
  return text.slice(start, i);
}

const NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const ESCAPES: Record<string, string> = { n: '\n', '\\': '\\', '"': '"' };

function parseSampleLine(line: string): { name: string; labels: Record<string, string>; value: number } | undefined {
  let i = 0;
  const skipBlanks = (): void => {
    while (line[i] === ' ' || line[i] === '\t') i++;
  };
  const word = (re: RegExp): string | undefined => {
    re.lastIndex = i;
    const m = re.exec(line);
    if (m) i = re.lastIndex;
    return m?.[0];
  };
  const name = word(NAME);
  if (name === undefined) return undefined;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      skipBlanks();
      if (line[i] === '}') break;
      const key = word(LABEL_NAME);
      skipBlanks();
      if (key === undefined || line[i] !== '=') return undefined;
      i++;
      skipBlanks();
      if (line[i] !== '"') return undefined;
      i++;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) return undefined; // the value never closed
        if (c === '"') break;
        if (c === '\\') {
          const next = line[i + 1];
          if (next === undefined) return undefined;
          value += ESCAPES[next] ?? `\\${next}`;
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      i++;
      labels[key] = value;
      skipBlanks();
      if (line[i] === ',') i++;
      else if (line[i] !== '}') return undefined;
    }
    i++;
  }
  if (line[i] !== ' ' && line[i] !== '\t') return undefined;
  const valueText = line.slice(i).trim().split(/\s+/)[0] ?? '';
  const value = Number(valueText);
  return valueText !== '' && Number.isFinite(value) ? { name, labels, value } : undefined;
}

// Names per engine, first match wins (vLLM, SGLang, TGI, llama.cpp, TensorRT-LLM on Triton).
const RUNNING = ['vllm:num_requests_running', 'sglang:num_running_reqs', 'tgi_batch_current_size', 'llamacpp:requests_processing'];
const WAITING = ['vllm:num_requests_waiting', 'sglang:num_queue_reqs', 'tgi_queue_size', 'llamacpp:requests_deferred'];
const KV = ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'sglang:token_usage', 'llamacpp:kv_cache_usage_ratio'];
const PREEMPTIONS = ['vllm:num_preemptions_total', 'sglang:num_retracted_reqs'];
// Counters are exposed with a `_total` suffix by prometheus_client; some exporters leave it off.
const PREFIX_HITS = ['vllm:prefix_cache_hits_total', 'vllm:prefix_cache_hits'];
const PREFIX_QUERIES = ['vllm:prefix_cache_queries_total', 'vllm:prefix_cache_queries'];
const PREFIX_RATE = ['sglang:cache_hit_rate', 'vllm:gpu_prefix_cache_hit_rate'];
const SPEC_DRAFT = ['vllm:spec_decode_num_draft_tokens_total', 'vllm:spec_decode_num_draft_tokens'];
const SPEC_ACCEPTED = ['vllm:spec_decode_num_accepted_tokens_total', 'vllm:spec_decode_num_accepted_tokens'];

const TRT_REQUESTS = 'nv_trt_llm_request_metrics';
const TRT_KV_BLOCKS = 'nv_trt_llm_kv_cache_block_metrics';

/** Every series sampleFromMetrics reads: the telemetry sampler parses these alone (parsePrometheus's `names`). */
export const SAMPLED_SERIES: ReadonlySet<string> = new Set([
  ...RUNNING, ...WAITING, ...KV, ...PREEMPTIONS, ...PREFIX_HITS, ...PREFIX_QUERIES, ...PREFIX_RATE, ...SPEC_DRAFT, ...SPEC_ACCEPTED, TRT_REQUESTS, TRT_KV_BLOCKS,
]);

function sum(series: Series | undefined, labelMatch?: [name: string, value: string]): number | undefined {
  if (!series) return undefined;
  const picked = labelMatch ? series.filter((s) => s.labels[labelMatch[0]] === labelMatch[1]) : series;
  return picked.length ? picked.reduce((a, s) => a + s.value, 0) : undefined;
}

function first(metrics: Map<string, Series>, names: readonly string[]): number | undefined {
  for (const n of names) {
    const v = sum(metrics.get(n));
    if (v !== undefined) return v;
  }
  return undefined;
}

export function sampleFromMetrics(metrics: Map<string, Series>, atMs: number): ServerSample {
  const trt = metrics.get(TRT_REQUESTS);
  const blocks = metrics.get(TRT_KV_BLOCKS);
  const used = sum(blocks, ['kv_cache_block_type', 'used']);
  const max = sum(blocks, ['kv_cache_block_type', 'max']);
  const s: ServerSample = { atMs };
  const running = first(metrics, RUNNING) ?? sum(trt, ['request_type', 'active']);
  const waiting = first(metrics, WAITING) ?? sum(trt, ['request_type', 'waiting']);
  const kv = first(metrics, KV) ?? (used !== undefined && max ? used / max : undefined);
  const pre = first(metrics, PREEMPTIONS);
  if (running !== undefined) s.running = running;
  if (waiting !== undefined) s.waiting = waiting;
  if (kv !== undefined) s.kvUsage = kv;
  if (pre !== undefined) s.preemptionsTotal = pre;
  const optional: Array<[Exclude<keyof ServerSample, 'edge'>, readonly string[]]> = [
    ['prefixCacheHitsTotal', PREFIX_HITS],
    ['prefixCacheQueriesTotal', PREFIX_QUERIES],
    ['prefixCacheHitRate', PREFIX_RATE],
    ['specDraftTokensTotal', SPEC_DRAFT],
    ['specAcceptedTokensTotal', SPEC_ACCEPTED],
  ];
  for (const [key, names] of optional) {
    const v = first(metrics, names);
    if (v !== undefined) s[key] = v;
  }
  return s;
}

export type { ServerTelemetry } from '../results/stage.js';

export function summarizeSamples(all: readonly ServerSample[]): ServerTelemetry | undefined {
  // Gauges come from the periodic samples inside the row; counters from every reading, edges included, in time order.
  const samples = all.filter((s) => !s.edge);
  const timeline = [...all].sort((a, b) => a.atMs - b.atMs);
  if (timeline.length === 0) return undefined;
  const vals = (f: (s: ServerSample) => number | undefined): number[] =>
    samples.map(f).filter((v): v is number => v !== undefined);
  const out: ServerTelemetry = { samples: samples.length };
  const running = vals((s) => s.running);
  const waiting = vals((s) => s.waiting);
  const kv = vals((s) => s.kvUsage);
  if (running.length) out.peakRunning = Math.max(...running);
  if (waiting.length) out.peakWaiting = Math.max(...waiting);
  if (kv.length) {
    out.peakKvUsage = Math.max(...kv);
    out.meanKvUsage = kv.reduce((a, b) => a + b, 0) / kv.length;
  }
  const increase = (f: (s: ServerSample) => number | undefined): number | undefined => {
    const v = timeline.map(f).filter((x): x is number => x !== undefined);
    return v.length >= 2 ? (v[v.length - 1] as number) - (v[0] as number) : undefined;
  };
  const preempted = increase((s) => s.preemptionsTotal);
  if (preempted !== undefined) out.preemptions = preempted;
  const queries = increase((s) => s.prefixCacheQueriesTotal);
  const hits = increase((s) => s.prefixCacheHitsTotal);
  const rates = vals((s) => s.prefixCacheHitRate);
  if (queries !== undefined && hits !== undefined && queries > 0) {
    out.prefixCacheHitRate = hits / queries;
    out.prefixCacheSource = 'server-counters';
  } else if (rates.length > 0) {
    out.prefixCacheHitRate = rates.reduce((a, b) => a + b, 0) / rates.length;
    out.prefixCacheSource = 'server-gauge';
  }
  const drafted = increase((s) => s.specDraftTokensTotal);
  const accepted = increase((s) => s.specAcceptedTokensTotal);
  if (drafted !== undefined && accepted !== undefined && drafted > 0) {
    out.specDecode = { draftTokens: drafted, acceptedTokens: accepted, acceptanceRate: accepted / drafted };
  }
  return out;
}
