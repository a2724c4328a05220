import type { Stats } from '../results/stats.js';
import type { MetricName, StageSummary } from '../results/index.js';
import { detailedRecords, okValues, pooledGaps, readDetailed } from './detailed-arrays.js';
import { buildStage, ImportNotes, rowShape, tallyErrors, withRequestValues } from './mapper.js';
import { keyedStats } from './percentile-keys.js';
import { isObj, num, obj, str, type ImportedRecord, type ImportedRun, type Obj } from './types.js';

/** One line of SGLang `bench_serving --output-file` (formats.md §4; the 2026 refactor's raw names too). */
export function isSglangLine(v: unknown): v is Obj {
  if (!isObj(v) || num(v['duration']) === undefined || num(v['completed']) === undefined) return false;
  return 'mean_e2e_latency_ms' in v || ('dataset_name' in v && 'backend' in v && 'concurrency' in v);
}

/** SGLang's native /generate backend divides each gap by the chunk's new tokens: its ITL is per token there. */
const nativeBackend = (o: Obj): boolean => str(o['backend']) === 'sglang' || str(o['backend']) === 'sglang-native';

/** SGLang bench_serving JSONL → an inferbench run: each line (one bench_serving run) is a stage. */
export function importSglang(lines: readonly Obj[], file: string): ImportedRun {
  const notes = new ImportNotes();
  const records: ImportedRecord[] = [];
  let errorsKnown = true;
  const stages: StageSummary[] = lines.map((o, index) => {
    const ok = num(o['completed']) ?? 0;
    // The 2026 refactor moves the per-request arrays under "details".
    const d = readDetailed(isObj(o['details']) ? (o['details'] as Obj) : o);
    const rows = d ? detailedRecords(d, index, records.length, { timing: true }) : [];
    records.push(...rows);
    const failed = rows.filter((r) => r.status === 'error');
    if (!d) errorsKnown = false;
    const metrics: Partial<Record<MetricName, Stats>> = {};
    const put = (name: MetricName, s: Stats | undefined): void => {
      if (s) metrics[name] = s;
    };
    put('ttftMs', withRequestValues(keyedStats(o, 'ttft', ok), okValues(rows, 'ttftMs')));
    put('e2eMs', keyedStats(o, 'e2e_latency', ok));
    // TPOT is (latency − TTFT)/(N − 1) with a latency to the stream's last line: not inferbench's ITL. The
    // per-request gaps, when the line has them, sum to last − first content chunk: inferbench's ITL exactly.
    put('itlMs', withRequestValues(undefined, okValues(rows, 'itlMs')));
    if (!nativeBackend(o)) {
      const gaps = pooledGaps(rows);
      put('chunkGapMs', withRequestValues(keyedStats(o, 'itl', gaps.length || ok), gaps));
    }
    put('promptTokens', withRequestValues(undefined, okValues(rows, 'promptTokens')));
    put('outputTokens', withRequestValues(undefined, okValues(rows, 'outputTokens')));
    const concurrency = num(o['max_concurrency']);
    const input = num(o['total_input_tokens']) ?? num(o['total_input']);
    const output = num(o['total_output_tokens']) ?? num(o['total_output']);
    return buildStage({
      index,
      ...rowShape({ ...(concurrency !== undefined ? { concurrency } : {}), rate: num(o['request_rate']) ?? (o['request_rate'] === null ? Number.POSITIVE_INFINITY : Number.NaN) }),
      durationS: num(o['duration']) ?? Number.NaN,
      ok,
      errors: failed.length,
      ...tallyErrors(failed),
      ...(num(o['request_throughput']) !== undefined ? { requestThroughput: num(o['request_throughput']) as number } : {}),
      ...(num(o['output_throughput']) !== undefined ? { outputTokenThroughput: num(o['output_throughput']) as number } : {}),
      ...(num(o['input_throughput']) !== undefined ? { promptTokenThroughput: num(o['input_throughput']) as number } : {}),
      ...(num(o['total_throughput']) !== undefined ? { totalTokenThroughput: num(o['total_throughput']) as number } : {}),
      ...(input !== undefined ? { totalPromptTokens: input } : {}),
      ...(output !== undefined ? { totalOutputTokens: output } : {}),
      ...(num(o['concurrency']) !== undefined ? { meanConcurrency: num(o['concurrency']) as number } : {}),
      metrics,
    });
  });

  const first = lines[0] ?? {};
  notes.mapped('ttftMs', "SGLang's TTFT (first chunk with text − send), the same definition; mean, median, std, p99 carried");
  notes.mapped('e2eMs', "SGLang's e2e_latency (last line of the stream − send), the same definition; mean, median, std, p99 carried");
  notes.mapped('chunk gap', `SGLang's ITL, every gap between chunks with text, pooled: inferbench's chunk gap, never its ITL${records.length ? '' : ' (its count is the number of requests: the line does not give the number of gaps)'}`);
  notes.mapped('mean concurrency', "SGLang's concurrency, Σ e2e / duration: the time-weighted mean of requests in flight");
  notes.mapped('throughput', "SGLang's request_throughput, input_throughput and output_throughput, completions (tokens) / duration: the same definition");
  if (records.length) notes.mapped('itlMs', 'computed per request from the --output-details gaps, (last − first chunk)/(N − 1)');
  else notes.leftOut('ITL (SGLang TPOT)', "SGLang divides (latency − TTFT) by N − 1 with a latency that runs to the stream's last line ([DONE]); inferbench's ITL ends at the last token chunk. Run bench_serving with --output-details to import per-request ITL");
  if (lines.some(nativeBackend)) notes.leftOut('chunk gap (native backend)', "SGLang's /generate backend splits each gap evenly over the chunk's tokens: a per-token figure, not a chunk gap");
  if (!errorsKnown) notes.leftOut('failed requests', 'a bench_serving line counts completed requests only (no failures, no total sent); --output-details adds the errors');
  notes.info("output lengths: SGLang takes usage.completion_tokens when the server sends usage, else the requested length; the file does not say which");

  const dataset = str(first['dataset_name']) ?? '';
  const fixed = /^random/.test(dataset) && num(first['random_range_ratio']) === 1;
  const promptTokens = num(first['random_input_len']);
  const outputTokens = num(first['random_output_len']);
  const server = obj(first['server_info']);
  const model = str(server['model_path']) ?? str(first['model']) ?? str(first['model_id']) ?? '(not recorded)';
  notes.info('created: the import time (a bench_serving line has no date)');
  return {
    source: { tool: 'sglang-bench-serving', version: str(server['version']) ?? 'unknown', file },
    summary: {
      createdAt: new Date().toISOString(),
      finishedAt: '',
      layout: 'sweep',
      context: { model, engine: 'unknown', ...(fixed && promptTokens !== undefined && outputTokens !== undefined ? { promptTokens, outputTokens } : {}) },
      target: { api: /chat/.test(str(first['backend']) ?? '') ? 'openai-chat' : nativeBackend(first) ? 'sglang' : 'openai-completions', engine: 'unknown', model, simulated: false },
      profile: [...new Set(stages.map((s) => (s.kind === 'closed' ? 'concurrent' : s.kind === 'open' ? 'poisson' : 'throughput')))].join(', '),
      workload: `SGLang bench_serving ${dataset || 'dataset'}${promptTokens !== undefined ? `: ${promptTokens} prompt tokens, ${outputTokens ?? '?'} output tokens (range ratio ${num(first['random_range_ratio']) ?? '?'})` : ''}`,
      windowRules: 'window (SGLang bench_serving): every request of the run (after one warm-up request), benchmark start to the last completion; latencies over successful requests',
      stages,
      interrupted: false,
      notes: notes.lines,
    },
    records,
  };
}
