import type { Stats } from '../results/stats.js';
import type { MetricName, StageSummary } from '../results/index.js';
import { detailedRecords, okValues, pooledGaps, readDetailed } from './detailed-arrays.js';
import { buildStage, ImportNotes, rowShape, tallyErrors, withRequestValues } from './mapper.js';
import { keyedStats, presentFigures } from './percentile-keys.js';
import { isObj, num, str, type ImportedRecord, type ImportedRun, type Obj } from './types.js';

/** One `vllm bench serve --save-result` object (formats.md §5). */
export function isVllmResult(v: unknown): v is Obj {
  // SGLang's lines echo many of the same arguments; its e2e key is spelled differently.
  return isObj(v) && num(v['completed']) !== undefined && num(v['duration']) !== undefined && 'model_id' in v && ('num_prompts' in v || 'tokenizer_id' in v) && !('mean_e2e_latency_ms' in v);
}

/** vLLM writes request_rate as a number or the string "inf". */
const rateOf = (v: unknown): number => (typeof v === 'number' ? v : v === 'inf' || v === 'Infinity' ? Number.POSITIVE_INFINITY : Number.NaN);

const isChat = (o: Obj): boolean => /chat/i.test(`${str(o['endpoint_type']) ?? ''} ${str(o['backend']) ?? ''}`);

/** vLLM's `date` is YYYYMMDD-HHMMSS in the local time of the machine that ran it (no time zone). */
function dateOf(o: Obj): string {
  const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})$/.exec(str(o['date']) ?? '');
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}` : '';
}

/** vLLM bench serve result(s) → an inferbench run: one stage per result object (--append-result files hold several). */
export function importVllm(results: readonly Obj[], file: string): ImportedRun {
  const notes = new ImportNotes();
  const records: ImportedRecord[] = [];
  const chat = results.some(isChat);
  const allStarts = results.flatMap((r) => readDetailed(r)?.startTimes ?? []).filter((s): s is number => s !== undefined);
  const originS = allStarts.length ? Math.min(...allStarts) : undefined;
  let detailed = false;
  const stages: StageSummary[] = results.map((o, index) => {
    const ok = num(o['completed']) ?? 0;
    const d = readDetailed(o);
    const rows = d ? detailedRecords(d, index, records.length, { timing: !isChat(o), ...(originS !== undefined ? { originS } : {}) }) : [];
    if (d) detailed = true;
    records.push(...rows);
    const failed = rows.filter((r) => r.status === 'error');
    const errors = num(o['failed']) ?? failed.length;
    const metrics: Partial<Record<MetricName, Stats>> = {};
    const put = (name: MetricName, s: Stats | undefined): void => {
      if (s) metrics[name] = s;
    };
    if (!isChat(o)) {
      const withTpot = rows.length ? okValues(rows, 'itlMs').length : ok;
      const gaps = pooledGaps(rows);
      put('ttftMs', withRequestValues(keyedStats(o, 'ttft', ok), okValues(rows, 'ttftMs')));
      put('itlMs', withRequestValues(keyedStats(o, 'tpot', withTpot), okValues(rows, 'itlMs')));
      put('chunkGapMs', withRequestValues(keyedStats(o, 'itl', gaps.length || ok), gaps));
    }
    put('promptTokens', withRequestValues(undefined, okValues(rows, 'promptTokens')));
    put('outputTokens', withRequestValues(undefined, okValues(rows, 'outputTokens')));
    const concurrency = num(o['max_concurrency']);
    return buildStage({
      index,
      ...rowShape({ ...(concurrency !== undefined ? { concurrency } : {}), rate: rateOf(o['request_rate']) }),
      durationS: num(o['duration']) ?? Number.NaN,
      ok,
      errors,
      ...(failed.length === errors ? tallyErrors(failed) : { errorsByCode: errors > 0 ? { E_IMPORTED: errors } : {} }),
      ...(num(o['request_throughput']) !== undefined ? { requestThroughput: num(o['request_throughput']) as number } : {}),
      ...(num(o['output_throughput']) !== undefined ? { outputTokenThroughput: num(o['output_throughput']) as number } : {}),
      ...(num(o['total_token_throughput']) !== undefined ? { totalTokenThroughput: num(o['total_token_throughput']) as number } : {}),
      ...(num(o['total_input_tokens']) !== undefined ? { totalPromptTokens: num(o['total_input_tokens']) as number } : {}),
      ...(num(o['total_output_tokens']) !== undefined ? { totalOutputTokens: num(o['total_output_tokens']) as number } : {}),
      metrics,
    });
  });

  const first = results[0] ?? {};
  if (chat) {
    notes.leftOut(
      'TTFT, ITL and chunk gap',
      "on a chat endpoint vLLM starts its TTFT at the first message with a choices entry, which can be a role-only delta with no text (inferbench: the first chunk with generated text); its TPOT and its ITL gaps start from the same message",
    );
  } else {
    notes.mapped('ttftMs', `vLLM's TTFT (first message with choices − send), the same definition on a completions endpoint; carried: ${presentFigures(keyedStats(first, 'ttft', 0))}`);
    notes.mapped('itlMs', "vLLM's TPOT, (E2EL − TTFT)/(N − 1): inferbench's ITL (design.md §2)");
    notes.mapped('chunk gap', "vLLM's ITL, every gap between messages with choices, pooled: inferbench's chunk gap, never its ITL");
    notes.info('vLLM counts every message with a choices entry as a token chunk, also one with empty text (llama.cpp ends its stream with an empty message that carries finish_reason): its last gap and its TPOT then end at that message');
  }
  if (detailed) notes.mapped('percentiles vLLM did not write (p90, p95, min, max)', 'computed from the file\'s per-request arrays (--save-detailed), as vLLM computes its own: linear percentiles, population stddev');
  notes.leftOut('request latency (E2EL)', "vLLM's E2EL ends at the last message with choices; inferbench's request latency runs to the end of the stream (after the usage chunk and [DONE])");
  notes.mapped('throughput', "vLLM's request_throughput, output_throughput and total_token_throughput, completions (tokens) / duration from first dispatch to last completion: the same definition; prompt tokens/s = total_input_tokens / duration");
  notes.info("output lengths: vLLM takes usage.completion_tokens when the server sends usage, else re-tokenizes the text with its client tokenizer; the file does not say which");
  const created = dateOf(first);
  if (created) notes.info(`created: vLLM's date (${str(first['date'])}), the local time of the machine that ran it`);

  const model = str(first['model_id']) ?? '(not recorded)';
  const backend = str(first['backend']) ?? '';
  const shapes = [...new Set(stages.map((s) => (s.kind === 'closed' ? 'concurrent' : s.kind === 'open' ? (num(first['burstiness']) === 1 ? 'poisson' : `gamma (burstiness ${num(first['burstiness']) ?? '?'})`) : 'throughput')))];
  return {
    source: { tool: 'vllm-bench-serve', version: str(first['vllm_version']) ?? 'unknown', file },
    summary: {
      createdAt: created,
      finishedAt: '',
      layout: 'sweep',
      context: { model, engine: 'unknown' },
      target: { api: chat ? 'openai-chat' : backend === 'openai' || backend === 'vllm' ? 'openai-completions' : backend || 'unknown', engine: 'unknown', model, simulated: false },
      profile: shapes.join(', '),
      workload: `vLLM bench serve prompts (${str(first['dataset_name']) ?? 'dataset not recorded in the result file'}), tokenizer ${str(first['tokenizer_id']) ?? 'not recorded'}`,
      windowRules: 'window (vLLM bench serve): every request of the run, first dispatch to last completion; no warm-up; latencies over successful requests',
      stages,
      interrupted: false,
      notes: notes.lines,
    },
    records,
  };
}
