import { createHash } from 'node:crypto';
import { importedSource } from './definitions.js';
import type { Stats } from '../results/stats.js';
import type { StageSummary } from '../results/stage.js';
import type { StoredRun } from '../store/run-store.js';

/**
 * `report --format llmd`: the llm-d benchmark report v0.2 (formats.md §1; llm-d-benchmark's schema_v0_2.py), one
 * report per row, as llm-d's own converters write one per benchmark (`scenario.load.standardized.stage` = the
 * row's index). JSON, which llm-d reads as it reads YAML (its loader is yaml.safe_load, and its reports have an
 * export_json). Absent figures are left out (the schema's exclude_none), never written as 0.
 */

type Unit = 'count' | 'ms' | 'ms/token' | 'tokens/s' | 'queries/s';

/** llm-d names for the load generators it knows (its WorkloadGenerator enum); others keep inferbench's name. */
const LLMD_TOOL: Record<string, string> = { guidellm: 'guidellm', 'vllm-bench-serve': 'vllm-benchmark', aiperf: 'aiperf' };

const finite = (v: number | undefined): v is number => v !== undefined && Number.isFinite(v);

/** An llm-d Statistics block from inferbench stats (median → p50); undefined when there is no mean. */
export function llmdStatistics(s: Stats | undefined, units: Unit): Record<string, unknown> | undefined {
  if (!s || !finite(s.mean)) return undefined;
  const out: Record<string, unknown> = { units, mean: s.mean };
  const put = (key: string, v: number): void => {
    if (finite(v)) out[key] = v;
  };
  if (finite(s.stddev) && s.stddev >= 0) out['stddev'] = s.stddev;
  put('min', s.min);
  put('p50', s.median);
  put('p90', s.p90);
  put('p95', s.p95);
  put('p99', s.p99);
  put('max', s.max);
  return out;
}

/** A rate as a Statistics block with its mean only (inferbench keeps one figure per row for rates). */
const rate = (v: number, units: Unit): Record<string, unknown> | undefined => (finite(v) ? { units, mean: v } : undefined);

/** Drops undefined members (llm-d's exclude_none) so that no key stands for a figure that is not there. */
function prune<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

const cfgId = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16);

/** A SequenceLength: fixed when the run asked for one length, else the measured distribution ('other'). */
function seqLen(fixed: number | undefined, s: Stats | undefined): Record<string, unknown> | undefined {
  if (fixed !== undefined) return { distribution: 'fixed', value: fixed };
  if (!s || !finite(s.mean)) return undefined;
  return prune({ distribution: 'other', value: s.mean, ...(finite(s.min) ? { min: Math.max(0, Math.floor(s.min)) } : {}), ...(finite(s.max) && s.max >= 1 ? { max: Math.ceil(s.max) } : {}) });
}

function loadSource(workload: string): 'random' | 'sampled' | 'unknown' {
  if (/synthetic|random/i.test(workload)) return 'random';
  if (/dataset|sharegpt|trace|replay|\.jsonl|\.csv|prompts from/i.test(workload)) return 'sampled';
  return 'unknown';
}

const isoDuration = (seconds: number): string | undefined => (finite(seconds) ? `PT${Number(seconds.toFixed(3))}S` : undefined);

/** The serving stack as llm-d describes it: an inference_engine when the GPU is known, else a generic component. */
function stackOf(run: StoredRun): Record<string, unknown>[] {
  const { context, target } = run.summary;
  const engine = target.engine && target.engine !== 'unknown' ? target.engine : context.engine;
  const model = { name: context.model || target.model || 'unknown' };
  const standardized = context.gpu
    ? {
        kind: 'inference_engine',
        tool: engine,
        tool_version: context.engineVersion ?? 'unknown',
        role: 'replica',
        replicas: 1,
        model,
        // The simulator's --gpus is its tensor-parallel size; a measured run records a GPU count only.
        accelerator: { model: context.gpu, count: context.gpus ?? 1, parallelism: target.simulated ? { tp: context.gpus ?? 1 } : {} },
      }
    : { kind: 'generic', tool: engine, tool_version: context.engineVersion ?? 'unknown', model };
  return [{ metadata: { schema_version: '0.0.1', label: `${engine}-0`, cfg_id: cfgId(standardized), description: target.url ?? (target.simulated ? 'inferbench built-in simulator' : 'target not recorded') }, standardized, native: {} }];
}

/** One llm-d v0.2 report for one row of a run. */
export function llmdReport(run: StoredRun, stage: StageSummary): Record<string, unknown> {
  const { summary } = run;
  const source = importedSource(run);
  const m = stage.metrics;
  const loadStandardized = prune({
    tool: source ? (LLMD_TOOL[source.tool] ?? source.tool) : 'inferbench',
    tool_version: source ? source.version : summary.tool.version,
    source: loadSource(summary.workload),
    stage: stage.index,
    input_seq_len: seqLen(summary.context.promptTokens, m.promptTokens) ?? { distribution: 'other', value: 0 },
    output_seq_len: seqLen(summary.context.outputTokens, m.outputTokens),
    ...(stage.kind === 'open' && finite(stage.targetRate) && stage.targetRate > 0 ? { rate_qps: stage.targetRate } : {}),
    ...(stage.concurrency !== undefined && stage.concurrency >= 1 ? { concurrency: stage.concurrency } : {}),
  });
  const loadNative = { config: prune({ row: stage.label, profile: summary.profile, workload: summary.workload, window_rules: summary.windowRules, label: summary.context.label, source }) };
  const start = Date.parse(summary.createdAt);
  const end = Date.parse(summary.finishedAt);
  return {
    version: '0.2',
    run: prune({
      uid: `${summary.runId || run.name}/${stage.index}`,
      eid: summary.runId || run.name,
      time: prune({
        ...(Number.isFinite(start) ? { start: summary.createdAt } : {}),
        ...(Number.isFinite(end) ? { end: summary.finishedAt } : {}),
        duration: isoDuration(stage.durationS),
      }),
      description: `${stage.label}: ${summary.context.model}${source ? ` (imported from ${source.tool})` : ''}; duration = the row's measured window`,
      keywords: [summary.context.label, source ? `imported:${source.tool}` : undefined, summary.profile].filter((k): k is string => typeof k === 'string' && k !== ''),
    }),
    scenario: {
      stack: stackOf(run),
      load: { metadata: { schema_version: '0.0.1', cfg_id: cfgId(loadStandardized), description: summary.workload }, standardized: loadStandardized, native: loadNative },
    },
    results: {
      request_performance: {
        aggregate: {
          requests: prune({
            total: stage.requests.total,
            failures: stage.requests.errors,
            incomplete: stage.requests.incomplete,
            input_length: llmdStatistics(m.promptTokens, 'count'),
            output_length: llmdStatistics(m.outputTokens, 'count'),
          }),
          latency: prune({
            time_to_first_token: llmdStatistics(m.ttftMs, 'ms'),
            // NTPOT (first token included) = e2e / output tokens: inferbench's latency per output token.
            normalized_time_per_output_token: llmdStatistics(m.latencyPerOutputTokenMs, 'ms/token'),
            // llm-d's TPOT = (latency − TTFT)/(N − 1): inferbench's ITL. Its ITL = gaps between tokens: inferbench's chunk gap.
            time_per_output_token: llmdStatistics(m.itlMs, 'ms/token'),
            inter_token_latency: llmdStatistics(m.chunkGapMs, 'ms/token'),
            request_latency: llmdStatistics(m.e2eMs, 'ms'),
          }),
          throughput: prune({
            input_token_rate: rate(stage.promptTokenThroughput, 'tokens/s'),
            output_token_rate: rate(stage.outputTokenThroughput, 'tokens/s'),
            total_token_rate: rate(stage.totalTokenThroughput, 'tokens/s'),
            request_rate: rate(stage.requestThroughput, 'queries/s'),
          }),
        },
      },
    },
  };
}

/**
 * Every report of a run: `benchmark_report_v0.2,_<run folder>_<row index>.json` (llm-d's file name, with the row). A
 * matrix cell's run is named by its path (`mx/vllm/run`, store/nested-runs.ts): its slashes become `_` in the file.
 */
export function llmdReports(run: StoredRun): { file: string; doc: Record<string, unknown> }[] {
  const name = run.name.replace(/[\\/]/g, '_');
  return run.summary.stages.map((s) => ({ file: `benchmark_report_v0.2,_${name}_${s.index}.json`, doc: llmdReport(run, s) }));
}
