import type { Stats } from '../results/stats.js';
import type { MetricName, StageSummary } from '../results/index.js';
import { buildStage, errorCodeOf, ImportNotes, partialStats, rowShape, scaleStats, tallyErrors, withRequestValues } from './mapper.js';
import { arr, isObj, num, obj, str, type ImportedRecord, type ImportedRun, type Obj } from './types.js';

/** GuideLLM 0.7 benchmarks.json (formats.md §6): `benchmarks[]` of `generative_benchmark`s. */
export function isGuidellm(v: unknown): boolean {
  if (!isObj(v) || !Array.isArray(v['benchmarks'])) return false;
  const first = v['benchmarks'][0];
  return str(obj(v['metadata'])['guidellm_version']) !== undefined || (isObj(first) && first['type_'] === 'generative_benchmark');
}

/** A GuideLLM distribution part ({mean, median, percentiles{…}, std_dev, count…}) as inferbench stats, times k. */
function distStats(d: unknown, k = 1): Stats | undefined {
  if (!isObj(d)) return undefined;
  const count = num(d['count']) ?? 0;
  if (count === 0) return undefined;
  const p = obj(d['percentiles']);
  const s = partialStats({ count, mean: num(d['mean']), median: num(d['median']), p90: num(p['p90']), p95: num(p['p95']), p99: num(p['p99']), min: num(d['min']), max: num(d['max']), stddev: num(d['std_dev']) });
  return k === 1 ? s : scaleStats(s, k);
}

const successful = (metrics: Obj, name: string): unknown => obj(metrics[name])['successful'];

/** The benchmark's load in inferbench's words, from its strategy. */
function shapeOf(strategy: Obj): ReturnType<typeof rowShape> {
  const type = str(strategy['type_']) ?? '';
  if (type === 'synchronous') return rowShape({ concurrency: 1 });
  if (type === 'concurrent') return rowShape({ concurrency: num(strategy['streams']) ?? num(strategy['max_concurrency']) ?? 1 });
  if (type === 'constant' || type === 'poisson') return rowShape({ rate: num(strategy['rate']) ?? Number.NaN });
  return rowShape({});
}

interface RequestItem {
  status: ImportedRecord['status'];
  item: Obj;
}

/** Every request item of a benchmark, with inferbench's status for it. */
function requestItems(b: Obj): RequestItem[] {
  const r = obj(b['requests']);
  return [
    ...arr(r['successful']).filter(isObj).map((item) => ({ status: 'ok' as const, item })),
    ...arr(r['errored']).filter(isObj).map((item) => ({ status: 'error' as const, item })),
    ...arr(r['incomplete']).filter(isObj).map((item) => ({ status: 'incomplete' as const, item })),
  ];
}

const startOf = (item: Obj): number | undefined => num(obj(obj(item['info'])['timings'])['request_start']);

/** One GuideLLM request stats item as an inferbench record (times in ms from `originS`). */
function toRecord(id: number, stage: number, { status, item }: RequestItem, originS: number): ImportedRecord {
  const info = obj(item['info']);
  const t = obj(info['timings']);
  const at = (key: string): number | undefined => {
    const s = num(t[key]);
    return s === undefined ? undefined : (s - originS) * 1000;
  };
  const rec: ImportedRecord = { id, stage, warmup: false, status };
  const put = <K extends keyof ImportedRecord>(key: K, v: ImportedRecord[K] | undefined): void => {
    if (v !== undefined) rec[key] = v;
  };
  const sent = at('request_start');
  const scheduled = at('targeted_start');
  put('scheduledAtMs', scheduled);
  put('sentAtMs', sent);
  if (sent !== undefined && scheduled !== undefined) rec.dispatchLagMs = sent - scheduled;
  put('firstTokenAtMs', at('first_token_iteration'));
  put('lastTokenAtMs', at('last_token_iteration'));
  put('endAtMs', at('request_end'));
  put('chunks', num(t['token_iterations']));
  const prompt = num(item['prompt_tokens']);
  const output = num(item['output_tokens']);
  put('promptTokens', prompt);
  put('outputTokens', output);
  put('serverRequestId', str(item['response_id']));
  if (status === 'ok') {
    const e2e = num(item['request_latency']);
    put('ttftMs', num(item['time_to_first_token_ms']));
    put('e2eMs', e2e === undefined ? undefined : e2e * 1000);
    // GuideLLM's per-request ITL is (last − first token)/(N − 1): inferbench's itlMs.
    if (output !== undefined && output > 1) put('itlMs', num(item['inter_token_latency_ms']));
    if (e2e !== undefined && output !== undefined && output > 0) {
      rec.latencyPerOutputTokenMs = (e2e * 1000) / output;
      if (prompt !== undefined) rec.latencyPerTokenMs = (e2e * 1000) / (prompt + output);
    }
  } else {
    const message = str(info['error']) ?? (status === 'incomplete' ? 'cancelled before it finished (GuideLLM incomplete)' : 'failed (GuideLLM gave no message)');
    rec.error = { message, ...errorCodeOf(message) };
  }
  return rec;
}

const values = (records: readonly ImportedRecord[], key: 'itlMs' | 'latencyPerOutputTokenMs' | 'latencyPerTokenMs'): number[] =>
  records.flatMap((r) => (r.status === 'ok' && r[key] !== undefined ? [r[key] as number] : []));

/** GuideLLM 0.7 benchmarks.json → an inferbench run: one stage per benchmark (a sweep's rows). */
export function importGuidellm(doc: Obj, file: string): ImportedRun {
  const version = str(obj(doc['metadata'])['guidellm_version']) ?? 'unknown';
  const spec = obj(obj(doc['config'])['spec']);
  const benchmarks = arr(doc['benchmarks']).filter(isObj);
  const notes = new ImportNotes();
  const starts = benchmarks.flatMap((b) => requestItems(b).flatMap((r) => startOf(r.item) ?? []));
  const originS = starts.length ? Math.min(...starts) : (num(benchmarks[0]?.['start_time']) ?? 0);

  let nextId = 0;
  const records: ImportedRecord[] = [];
  let sampled = false;
  const stages: StageSummary[] = benchmarks.map((b, index) => {
    const m = obj(b['metrics']);
    const totals = obj(m['request_totals']);
    const ok = num(totals['successful']) ?? 0;
    const errors = num(totals['errored']) ?? 0;
    const incomplete = num(totals['incomplete']) ?? 0;
    const items = requestItems(b);
    const rows = items.map((it) => toRecord(nextId++, index, it, originS));
    records.push(...rows);
    // With --sample-size the lists hold a reservoir sample: per-request figures then describe the sample only.
    const complete = rows.filter((r) => r.status === 'ok').length === ok;
    if (!complete) sampled = true;
    const metrics: Partial<Record<MetricName, Stats>> = {};
    const put = (name: MetricName, s: Stats | undefined): void => {
      if (s) metrics[name] = s;
    };
    put('ttftMs', distStats(successful(m, 'time_to_first_token_ms')));
    put('e2eMs', distStats(successful(m, 'request_latency'), 1000));
    put('promptTokens', distStats(successful(m, 'prompt_token_count')));
    put('outputTokens', distStats(successful(m, 'output_token_count')));
    if (complete) {
      put('itlMs', withRequestValues(undefined, values(rows, 'itlMs')));
      put('latencyPerOutputTokenMs', withRequestValues(undefined, values(rows, 'latencyPerOutputTokenMs')));
      put('latencyPerTokenMs', withRequestValues(undefined, values(rows, 'latencyPerTokenMs')));
    }
    const failed = rows.filter((r) => r.status === 'error');
    const errorTally = failed.length === errors ? tallyErrors(failed) : { errorsByCode: errors > 0 ? { E_IMPORTED: errors } : {} };
    const durationS = num(b['duration']) ?? Number.NaN;
    const concurrency = num(obj(obj(m['request_concurrency'])['total'])['mean']);
    return buildStage({
      index,
      ...shapeOf(obj(obj(b['config'])['strategy'])),
      durationS,
      ok,
      errors,
      incomplete,
      ...errorTally,
      totalOutputTokens: num(obj(successful(m, 'output_token_count'))['total_sum']),
      totalPromptTokens: num(obj(successful(m, 'prompt_token_count'))['total_sum']),
      ...(concurrency !== undefined ? { meanConcurrency: concurrency } : {}),
      metrics,
    });
  });

  const first = benchmarks[0] ?? {};
  const rps = num(obj(successful(obj(first['metrics']), 'requests_per_second'))['mean']);
  const tps = num(obj(successful(obj(first['metrics']), 'output_tokens_per_second'))['mean']);
  notes.mapped('ttftMs, e2eMs (request latency), prompt/output tokens', "GuideLLM's time_to_first_token_ms, request_latency (s → ms), prompt_token_count and output_token_count over successful requests, the same definitions; means, medians, percentiles and stddev carried as GuideLLM computed them (its percentile method is its own, not linear interpolation)");
  if (sampled) {
    notes.leftOut('ITL, latency per (output) token', "GuideLLM's aggregate ITL weights requests by their tokens, and the file holds a sample of the requests only (--sample-size), too few to recompute it over every request");
  } else {
    notes.mapped('itlMs', "recomputed over requests from GuideLLM's per-request inter_token_latency_ms, (last − first token)/(N − 1): GuideLLM's aggregate weights it by tokens, inferbench's by requests");
    notes.mapped('latency per (output) token', 'computed per request from request_latency and the token counts (inferbench formulas)');
  }
  notes.mapped(
    'throughput',
    `inferbench's formula — completions (tokens) / the benchmark's duration — from GuideLLM's totals; GuideLLM's own requests_per_second and output_tokens_per_second means are rates over its time series (first row: ${rps?.toFixed(3) ?? '—'} req/s, ${tps?.toFixed(1) ?? '—'} tok/s) and are not carried`,
  );
  notes.mapped('mean concurrency', "GuideLLM's request_concurrency mean (time-weighted, all requests)");
  notes.leftOut('time_per_output_token_ms (TPOT)', 'GuideLLM divides (last token − request start) by N, so it includes the first token: neither inferbench ITL nor latency per output token');
  notes.leftOut('chunk gap', 'GuideLLM records no gaps between chunks');
  if (sampled) notes.info('requests.jsonl holds the sample of requests GuideLLM kept (--sample-size), not every request');

  const backend = obj(obj(first['config'])['backend']);
  const specBackend = obj(spec['backend']);
  const model = str(backend['model']) || str(specBackend['model']) || '(not recorded)';
  const format = str(backend['request_format']) ?? str(specBackend['request_format']) ?? '';
  const data = arr(spec['data']).filter(isObj);
  const d0 = data.length === 1 ? data[0] : undefined;
  const fixed = (k: string): number | undefined =>
    d0 && d0['kind'] === 'synthetic_text' && d0[`${k}_stdev`] == null && d0[`${k}_min`] == null && d0[`${k}_max`] == null ? num(d0[k]) : undefined;
  const promptTokens = fixed('prompt_tokens');
  const outputTokens = fixed('output_tokens');
  const profile = obj(spec['profile']);
  const epochIso = (s: unknown): string => (num(s) !== undefined ? new Date((num(s) as number) * 1000).toISOString() : '');
  const warm = obj(profile['warmup']);
  const cool = obj(profile['cooldown']);
  /** GuideLLM's warm-up / cool-down: a value (seconds or requests, by its mode) or a share of the benchmark. */
  const phase = (p: Obj): string => {
    const value = num(p['value']);
    const percent = num(p['percent']);
    if (value === undefined && percent === undefined) return 'none';
    return `${value ?? `${(percent as number) * 100}%`} (${str(p['mode']) ?? 'prefer_duration'})`;
  };
  const url = str(backend['target']) ?? str(specBackend['target']);
  return {
    source: { tool: 'guidellm', version, file },
    summary: {
      createdAt: epochIso(first['start_time']),
      finishedAt: epochIso(benchmarks[benchmarks.length - 1]?.['end_time']),
      layout: 'sweep',
      context: {
        model,
        engine: 'unknown',
        ...(promptTokens !== undefined && outputTokens !== undefined ? { promptTokens, outputTokens } : {}),
      },
      target: {
        ...(url !== undefined ? { url } : {}),
        api: format.includes('chat') ? 'openai-chat' : format.includes('completions') ? 'openai-completions' : format || 'unknown',
        engine: 'unknown',
        model,
        simulated: false,
      },
      profile: str(profile['kind']) ?? 'unknown',
      workload: d0 ? `GuideLLM ${str(d0['kind']) ?? 'data'}${promptTokens !== undefined ? `: ${promptTokens} prompt tokens, ${outputTokens ?? '?'} output tokens` : ''}` : `GuideLLM data (${data.length} sources)`,
      windowRules: `window (GuideLLM ${version}): each benchmark's measured period, warm-up ${phase(warm)}, cool-down ${phase(cool)}; rates over its duration; latencies over its successful requests`,
      stages,
      interrupted: false,
      notes: notes.lines,
    },
    records,
  };
}
