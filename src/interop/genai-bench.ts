import type { Stats } from '../results/stats.js';
import type { MetricName, StageSummary } from '../results/index.js';
import { buildStage, errorCodeOf, ImportNotes, partialStats, rowShape, scaleStats, withRequestValues } from './mapper.js';
import { arr, isObj, num, obj, str, type ImportedRecord, type ImportedRun, type Obj } from './types.js';

/**
 * genai-bench experiment folders (formats.md §3): experiment_metadata.json plus one JSON per scenario ×
 * concurrency, `{aggregated_metrics, individual_request_metrics, _time_unit}`. Read from genai-bench's source
 * and docs: no real folder was at hand.
 */
export function isGenaiRunFile(v: unknown): v is Obj {
  return isObj(v) && isObj(v['aggregated_metrics']) && Array.isArray(v['individual_request_metrics']);
}

export function isGenaiMetadata(v: unknown): v is Obj {
  return isObj(v) && 'api_backend' in v && ('traffic_scenario' in v || 'benchmark_version' in v);
}

/** A genai-bench stats field `{min,max,mean,stddev,p50,p90,…}` (population stddev, linear percentiles), times k. */
function fieldStats(stats: Obj, field: string, count: number, k = 1): Stats | undefined {
  const f = stats[field];
  if (!isObj(f) || num(f['mean']) === undefined) return undefined;
  const s = partialStats({ count, mean: num(f['mean']), median: num(f['p50']), p90: num(f['p90']), p95: num(f['p95']), p99: num(f['p99']), min: num(f['min']), max: num(f['max']), stddev: num(f['stddev']) });
  return k === 1 ? s : scaleStats(s, k);
}

/** Per-request metrics as records: genai-bench keeps no timestamps, only durations and token counts. */
function toRecords(items: readonly unknown[], stage: number, firstId: number, k: number): ImportedRecord[] {
  return items.filter(isObj).map((m, i) => {
    const code = num(m['error_code']);
    const message = str(m['error_message']);
    const failed = (code !== undefined && code !== 200) || (message !== undefined && message !== '');
    const rec: ImportedRecord = { id: firstId + i, stage, warmup: false, status: failed ? 'error' : 'ok' };
    const prompt = num(m['num_input_tokens']);
    const output = num(m['num_output_tokens']);
    if (prompt !== undefined) rec.promptTokens = prompt;
    if (output !== undefined) rec.outputTokens = output;
    if (failed) {
      const text = message || `HTTP ${code ?? '?'}`;
      rec.error = code !== undefined && code >= 400 && code < 600 ? { code: `E_HTTP_STATUS:${code}`, message: text, httpStatus: code } : { message: text, ...errorCodeOf(text) };
      return rec;
    }
    const ttft = num(m['ttft']);
    const e2e = num(m['e2e_latency']);
    if (ttft !== undefined) rec.ttftMs = ttft * k;
    if (e2e !== undefined) {
      rec.e2eMs = e2e * k;
      if (output !== undefined && output > 0) rec.latencyPerOutputTokenMs = rec.e2eMs / output;
      if (output !== undefined && prompt !== undefined && prompt + output > 0) rec.latencyPerTokenMs = rec.e2eMs / (prompt + output);
    }
    return rec;
  });
}

const okValues = (rows: readonly ImportedRecord[], key: 'latencyPerOutputTokenMs' | 'latencyPerTokenMs'): number[] =>
  rows.flatMap((r) => (r.status === 'ok' && r[key] !== undefined ? [r[key] as number] : []));

/** genai-bench folder (metadata + run files) or one run file → an inferbench run, one stage per run file. */
export function importGenaiBench(metadata: Obj | undefined, runFiles: readonly Obj[], file: string): ImportedRun {
  const notes = new ImportNotes();
  const meta = metadata ?? {};
  const ordered = [...runFiles].sort((a, b) => {
    const am = obj(a['aggregated_metrics']);
    const bm = obj(b['aggregated_metrics']);
    return (str(am['scenario']) ?? '').localeCompare(str(bm['scenario']) ?? '') || (num(am['num_concurrency']) ?? num(am['batch_size']) ?? 0) - (num(bm['num_concurrency']) ?? num(bm['batch_size']) ?? 0);
  });
  const scenarios = new Set(ordered.map((r) => str(obj(r['aggregated_metrics'])['scenario']) ?? ''));
  const records: ImportedRecord[] = [];
  const stages: StageSummary[] = ordered.map((run, index) => {
    const agg = obj(run['aggregated_metrics']);
    const unit = str(run['_time_unit']) ?? str(meta['metrics_time_unit']) ?? 's';
    const k = unit === 'ms' ? 1 : 1000;
    const stats = obj(agg['stats']);
    const ok = num(agg['num_completed_requests']) ?? 0;
    const errors = num(agg['num_error_requests']) ?? 0;
    const rows = toRecords(arr(run['individual_request_metrics']), index, records.length, k);
    records.push(...rows);
    const metrics: Partial<Record<MetricName, Stats>> = {};
    const put = (name: MetricName, s: Stats | undefined): void => {
      if (s) metrics[name] = s;
    };
    put('ttftMs', fieldStats(stats, 'ttft', ok, k));
    put('e2eMs', fieldStats(stats, 'e2e_latency', ok, k));
    put('promptTokens', fieldStats(stats, 'num_input_tokens', ok));
    put('outputTokens', fieldStats(stats, 'num_output_tokens', ok));
    put('latencyPerOutputTokenMs', withRequestValues(undefined, okValues(rows, 'latencyPerOutputTokenMs')));
    put('latencyPerTokenMs', withRequestValues(undefined, okValues(rows, 'latencyPerTokenMs')));
    const errorsByCode: Record<string, number> = {};
    for (const [code, n] of Object.entries(obj(agg['error_codes_frequency']))) {
      const key = /^[45]\d\d$/.test(code) ? `E_HTTP_STATUS:${code}` : 'E_IMPORTED';
      errorsByCode[key] = (errorsByCode[key] ?? 0) + (num(n) ?? 0);
    }
    const concurrency = num(agg['num_concurrency']) ?? num(agg['batch_size']);
    const shape = rowShape(concurrency !== undefined ? { concurrency } : {});
    const scenario = str(agg['scenario']) ?? '';
    const firstError = rows.find((r) => r.status === 'error')?.error;
    return buildStage({
      index,
      ...shape,
      label: scenarios.size > 1 ? `${scenario} ${shape.label}` : shape.label,
      durationS: num(agg['run_duration']) ?? Number.NaN,
      ok,
      errors,
      errorsByCode,
      ...(firstError ? { firstError: `${firstError.code}: ${firstError.message}` } : {}),
      ...(num(agg['requests_per_second']) !== undefined ? { requestThroughput: num(agg['requests_per_second']) as number } : {}),
      ...(num(agg['mean_output_throughput_tokens_per_s']) !== undefined ? { outputTokenThroughput: num(agg['mean_output_throughput_tokens_per_s']) as number } : {}),
      ...(num(agg['mean_input_throughput_tokens_per_s']) !== undefined ? { promptTokenThroughput: num(agg['mean_input_throughput_tokens_per_s']) as number } : {}),
      ...(num(agg['mean_total_tokens_throughput_tokens_per_s']) !== undefined ? { totalTokenThroughput: num(agg['mean_total_tokens_throughput_tokens_per_s']) as number } : {}),
      metrics,
    });
  });

  notes.mapped('ttftMs, e2eMs, prompt/output tokens', "genai-bench's ttft, e2e_latency (end of the stream − start), num_input_tokens and num_output_tokens stats, the same definitions (s → ms when its time unit is s)");
  notes.mapped('latency per (output) token', 'computed per request from e2e_latency and the token counts (inferbench formulas)');
  notes.mapped('throughput', "genai-bench's requests_per_second and mean_*_throughput_tokens_per_s, sums / run_duration: the same definition");
  notes.leftOut('ITL (genai-bench TPOT)', "genai-bench divides (e2e − TTFT) by N − 1 with an e2e that runs to the stream's end; inferbench's ITL ends at the last token chunk");
  notes.leftOut('chunk gap', 'genai-bench records no gaps between chunks');
  notes.info('format read from genai-bench\'s source and documentation (no real genai-bench folder was at hand when this importer was written)');

  const model = str(meta['api_model_name']) ?? str(meta['model']) ?? '(not recorded)';
  const engine = str(meta['server_engine']) ?? 'unknown';
  const gpus = Number(str(meta['server_gpu_count']) ?? num(meta['server_gpu_count']) ?? Number.NaN);
  const folderTime = /(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})$/.exec(str(meta['experiment_folder_name']) ?? '');
  if (folderTime) notes.info('created: the time in the experiment folder\'s name, the local time of the machine that ran it');
  const task = str(meta['task']) ?? 'text-to-text';
  return {
    source: { tool: 'genai-bench', version: str(meta['benchmark_version']) ?? 'unknown', file },
    summary: {
      createdAt: folderTime ? `${folderTime[1]}-${folderTime[2]}-${folderTime[3]}T${folderTime[4]}:${folderTime[5]}:${folderTime[6]}` : new Date().toISOString(),
      finishedAt: '',
      layout: 'sweep',
      context: {
        model,
        engine,
        ...(str(meta['server_version']) ? { engineVersion: str(meta['server_version']) as string } : {}),
        ...(str(meta['server_gpu_type']) ? { gpu: str(meta['server_gpu_type']) as string } : {}),
        ...(Number.isFinite(gpus) && gpus > 0 ? { gpus } : {}),
      },
      target: { api: str(meta['api_backend']) ?? 'unknown', engine, model, simulated: false },
      profile: 'concurrent',
      workload: `genai-bench ${task} scenarios ${[...scenarios].join(', ')}${str(meta['dataset_path']) ? ` (dataset ${str(meta['dataset_path'])})` : ''}`,
      windowRules: 'window (genai-bench): each run file\'s run, warm-up and cool-down requests left out, rates over run_duration (wall clock); latencies over successful requests',
      stages,
      interrupted: false,
      notes: notes.lines,
    },
    records,
  };
}
