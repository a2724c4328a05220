import type { Stats } from '../results/stats.js';
import type { MetricName } from '../results/metric-names.js';
import { buildStage, errorCodeOf, ImportNotes, msPer, partialStats, rowShape, tallyErrors, withRequestValues } from './mapper.js';
import { isObj, num, obj, str, arr, type ImportedRecord, type ImportedRun, type Obj } from './types.js';

/**
 * AIPerf's profile_export_aiperf.json (formats.md §2): one stats block per metric tag at the top level,
 * `{unit, avg, min, max, p1…p99, std, count, sum}`. Read from AIPerf's docs: no real file was at hand.
 */
export function isAiperfSummary(v: unknown): v is Obj {
  return isObj(v) && (str(v['aiperf_version']) !== undefined || (isObj(v['request_throughput']) && 'unit' in (v['request_throughput'] as Obj) && isObj(v['time_to_first_token'])));
}

/** One line of AIPerf's per-record profile_export.jsonl: `{metadata, metrics: {tag: {value, unit}}, error}`. */
export function isAiperfRecord(v: unknown): v is Obj {
  return isObj(v) && isObj(v['metadata']) && isObj(v['metrics']) && 'request_start_ns' in (v['metadata'] as Obj);
}

/** A time metric's stats in ms; AIPerf's std is the sample stddev, made population (inferbench's) by √((n−1)/n). */
function timeStats(block: unknown): Stats | undefined {
  if (!isObj(block)) return undefined;
  const k = msPer(str(block['unit']));
  const mean = num(block['avg']);
  if (k === undefined || mean === undefined) return undefined;
  const count = num(block['count']) ?? Number.NaN;
  const std = num(block['std']);
  const g = (key: string): number | undefined => {
    const v = num(block[key]);
    return v === undefined ? undefined : v * k;
  };
  return partialStats({
    count: Number.isFinite(count) ? count : 0,
    mean: mean * k,
    median: g('p50'),
    p90: g('p90'),
    p95: g('p95'),
    p99: g('p99'),
    min: g('min'),
    max: g('max'),
    ...(std !== undefined && count > 1 ? { stddev: std * k * Math.sqrt((count - 1) / count) } : {}),
  });
}

/** A count metric (tokens) as stats, the same rules without a unit conversion. */
function countStats(block: unknown): Stats | undefined {
  if (!isObj(block) || num(block['avg']) === undefined) return undefined;
  return timeStats({ ...block, unit: 'ms' });
}

const scalar = (doc: Obj, tag: string): number | undefined => num(obj(doc[tag])['avg']);

/** One per-record line as an inferbench record (times in ms from the first request start). */
function toRecord(line: Obj, id: number, originNs: number): ImportedRecord {
  const meta = obj(line['metadata']);
  const metrics = obj(line['metrics']);
  const value = (tag: string): number | undefined => {
    const m = obj(metrics[tag]);
    const v = num(m['value']);
    const k = msPer(str(m['unit']));
    return v === undefined ? undefined : k === undefined ? v : v * k;
  };
  const err = line['error'];
  const rec: ImportedRecord = { id, stage: 0, warmup: str(meta['benchmark_phase']) === 'warmup', status: isObj(err) ? 'error' : meta['was_cancelled'] === true ? 'incomplete' : 'ok' };
  const start = num(meta['request_start_ns']);
  const end = num(meta['request_end_ns']);
  // Epoch ns are past 2^53: a double keeps them to ~256 ns, so times are rounded to the µs.
  const ms = (ns: number): number => Math.round((ns - originNs) / 1e3) / 1e3;
  if (start !== undefined) rec.sentAtMs = ms(start);
  if (end !== undefined) rec.endAtMs = ms(end);
  const put = (key: 'ttftMs' | 'itlMs' | 'promptTokens' | 'outputTokens', v: number | undefined): void => {
    if (v !== undefined) rec[key] = v;
  };
  put('ttftMs', value('time_to_first_token'));
  put('itlMs', value('inter_token_latency'));
  put('promptTokens', num(obj(metrics['input_sequence_length'])['value']));
  put('outputTokens', num(obj(metrics['output_sequence_length'])['value']));
  const icl = obj(metrics['inter_chunk_latency']);
  const k = msPer(str(icl['unit'])) ?? 1;
  if (Array.isArray(icl['value'])) rec.chunkGapsMs = arr(icl['value']).flatMap((g) => (num(g) !== undefined ? [(num(g) as number) * k] : []));
  if (isObj(err)) {
    const message = str(err['message']) ?? str(err['type']) ?? 'failed';
    const code = num(err['code']);
    rec.error = code !== undefined && code >= 400 && code < 600 ? { code: `E_HTTP_STATUS:${code}`, message, httpStatus: code } : { message, ...errorCodeOf(message) };
  }
  return rec;
}

/** AIPerf summary (+ its per-record lines when found beside it) → an inferbench run of one stage. */
export function importAiperf(doc: Obj, recordLines: readonly Obj[], file: string): ImportedRun {
  const notes = new ImportNotes();
  const starts = recordLines.flatMap((l) => num(obj(l['metadata'])['request_start_ns']) ?? []);
  const originNs = starts.length ? Math.min(...starts) : 0;
  const records = recordLines.map((l, i) => toRecord(l, i, originNs));
  const measured = records.filter((r) => !r.warmup);
  const metrics: Partial<Record<MetricName, Stats>> = {};
  const put = (name: MetricName, s: Stats | undefined): void => {
    if (s) metrics[name] = s;
  };
  const values = (key: 'ttftMs' | 'itlMs'): number[] => measured.flatMap((r) => (r.status === 'ok' && r[key] !== undefined ? [r[key] as number] : []));
  put('ttftMs', withRequestValues(timeStats(doc['time_to_first_token']), values('ttftMs')));
  put('itlMs', withRequestValues(timeStats(doc['inter_token_latency']), values('itlMs')));
  const gaps = measured.flatMap((r) => (r.status === 'ok' ? (r.chunkGapsMs ?? []) : []));
  put('chunkGapMs', withRequestValues(timeStats(doc['inter_chunk_latency']), gaps));
  put('promptTokens', countStats(doc['input_sequence_length']));
  put('outputTokens', countStats(doc['output_sequence_length']));

  const cfg = obj(doc['input_config']);
  const loadgen = obj(cfg['loadgen']);
  const endpoint = obj(cfg['endpoint']);
  const ok = scalar(doc, 'request_count') ?? measured.filter((r) => r.status === 'ok').length;
  const failed = measured.filter((r) => r.status === 'error');
  const errors = scalar(doc, 'error_request_count') ?? failed.length;
  const duration = obj(doc['benchmark_duration']);
  const durationS = (num(duration['avg']) ?? Number.NaN) * ((msPer(str(duration['unit'])) ?? 1000) / 1000);
  const concurrency = num(loadgen['concurrency']);
  const rate = num(loadgen['request_rate']);
  const stage = buildStage({
    index: 0,
    ...rowShape({ ...(concurrency !== undefined ? { concurrency } : {}), ...(rate !== undefined ? { rate } : {}) }),
    durationS,
    ok,
    errors,
    ...(failed.length === errors ? tallyErrors(failed) : { errorsByCode: errors > 0 ? { E_IMPORTED: errors } : {} }),
    ...(scalar(doc, 'request_throughput') !== undefined ? { requestThroughput: scalar(doc, 'request_throughput') as number } : {}),
    ...(scalar(doc, 'output_token_throughput') !== undefined ? { outputTokenThroughput: scalar(doc, 'output_token_throughput') as number } : {}),
    ...(scalar(doc, 'total_token_throughput') !== undefined ? { totalTokenThroughput: scalar(doc, 'total_token_throughput') as number } : {}),
    ...(scalar(doc, 'total_isl') !== undefined ? { totalPromptTokens: scalar(doc, 'total_isl') as number } : {}),
    metrics,
  });

  notes.mapped('ttftMs', "AIPerf's time_to_first_token (first content response − request start), the same definition");
  notes.mapped('itlMs', "AIPerf's inter_token_latency, (request_latency − TTFT)/(OSL − 1): inferbench's ITL");
  notes.mapped('chunk gap', "AIPerf's inter_chunk_latency (the gaps between chunks), when the file has it: inferbench's chunk gap");
  notes.mapped('stddev', "AIPerf writes the sample stddev; carried as the population stddev inferbench uses, × √((n − 1)/n)");
  notes.mapped('throughput', "AIPerf's request_throughput and output_token_throughput, over benchmark_duration (first request → last response): the same definition");
  notes.leftOut('request latency', "AIPerf's request_latency ends at the last content response; inferbench's runs to the end of the stream");
  notes.info('format read from AIPerf\'s documentation (no real AIPerf file was at hand when this importer was written)');
  if (recordLines.length) notes.info(`requests.jsonl from ${recordLines.length} per-record lines (profile_export.jsonl)`);

  const model = str(arr(endpoint['model_names'])[0]) ?? '(not recorded)';
  const type = str(endpoint['type']) ?? '';
  const version = str(doc['aiperf_version']) ?? 'unknown';
  const startIso = str(doc['start_time']) ?? '';
  return {
    source: { tool: 'aiperf', version, file },
    summary: {
      createdAt: startIso,
      finishedAt: str(doc['end_time']) ?? '',
      layout: 'sweep',
      context: { model, engine: 'unknown' },
      target: { ...(str(endpoint['url']) ? { url: str(endpoint['url']) as string } : {}), api: type.includes('chat') ? 'openai-chat' : type ? `openai-${type}` : 'unknown', engine: 'unknown', model, simulated: false },
      profile: stage.kind === 'closed' ? 'concurrent' : stage.kind === 'open' ? 'poisson' : 'throughput',
      workload: 'AIPerf prompts (see input_config in the source file)',
      windowRules: 'window (AIPerf): the profiling phase, first request to last response (warm-up requests left out); latencies over successful requests',
      stages: [stage],
      interrupted: doc['was_cancelled'] === true,
      notes: notes.lines,
    },
    records,
  };
}
