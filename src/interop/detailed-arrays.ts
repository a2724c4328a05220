import { errorCodeOf } from './mapper.js';
import { arr, num, str, type ImportedRecord, type Obj } from './types.js';

/**
 * The per-request arrays vLLM (--save-detailed) and SGLang (--output-details) add to a result: index-aligned
 * `input_lens`, `output_lens` (0 = failed), `ttfts` (s), `itls` (lists of s), `errors` ("" = ok); vLLM also
 * `start_times` (perf_counter s, arbitrary origin) and `latencies` (s).
 */
export interface DetailedArrays {
  inputLens: (number | undefined)[];
  outputLens: (number | undefined)[];
  ttfts: (number | undefined)[];
  itls: number[][];
  errors: string[];
  startTimes?: (number | undefined)[];
  latencies?: (number | undefined)[];
}

export function readDetailed(o: Obj): DetailedArrays | undefined {
  const ttfts = arr(o['ttfts']);
  const outputLens = arr(o['output_lens']);
  if (ttfts.length === 0 || outputLens.length !== ttfts.length) return undefined;
  const nums = (v: unknown): (number | undefined)[] => arr(v).map(num);
  const startTimes = nums(o['start_times']);
  const latencies = nums(o['latencies']);
  return {
    inputLens: nums(o['input_lens']),
    outputLens: outputLens.map(num),
    ttfts: ttfts.map(num),
    itls: arr(o['itls']).map((l) => arr(l).flatMap((g) => num(g) ?? [])),
    errors: arr(o['errors']).map((e) => str(e) ?? ''),
    ...(startTimes.length === ttfts.length ? { startTimes } : {}),
    ...(latencies.length === ttfts.length ? { latencies } : {}),
  };
}

export interface DetailedOptions {
  /** TTFT, chunk gaps and ITL are inferbench's quantities for this file (not a chat stream's role-only first message). */
  timing: boolean;
  /** Seconds subtracted from start_times (the run's first start), so sentAtMs starts near 0. */
  originS?: number;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** One record per index; ok when the error text is empty and the request produced output. */
export function detailedRecords(d: DetailedArrays, stage: number, firstId: number, opts: DetailedOptions): ImportedRecord[] {
  return d.ttfts.map((ttftS, i) => {
    const message = d.errors[i] ?? '';
    const ok = message === '' && (d.outputLens[i] ?? 0) > 0;
    const rec: ImportedRecord = { id: firstId + i, stage, warmup: false, status: ok ? 'ok' : 'error' };
    const prompt = d.inputLens[i];
    const output = d.outputLens[i];
    if (prompt !== undefined) rec.promptTokens = prompt;
    if (output !== undefined) rec.outputTokens = output;
    const start = d.startTimes?.[i];
    if (start !== undefined) rec.sentAtMs = (start - (opts.originS ?? 0)) * 1000;
    if (!ok) {
      const text = message || 'failed (no output)';
      rec.error = { message: text, ...errorCodeOf(text) };
      return rec;
    }
    if (!opts.timing || ttftS === undefined) return rec;
    const gaps = d.itls[i] ?? [];
    rec.ttftMs = ttftS * 1000;
    rec.chunkGapsMs = gaps.map((g) => g * 1000);
    rec.chunks = gaps.length + 1;
    // (last − first token chunk)/(N − 1): the gaps sum to last − first.
    if (output !== undefined && output > 1) rec.itlMs = (sum(gaps) * 1000) / (output - 1);
    if (rec.sentAtMs !== undefined) {
      rec.firstTokenAtMs = rec.sentAtMs + rec.ttftMs;
      rec.lastTokenAtMs = rec.firstTokenAtMs + sum(gaps) * 1000;
    }
    return rec;
  });
}

/** Values of a numeric record field over the ok records (for filling the figures an aggregate lacks). */
export function okValues(records: readonly ImportedRecord[], key: 'ttftMs' | 'itlMs' | 'promptTokens' | 'outputTokens' | 'e2eMs' | 'latencyPerOutputTokenMs' | 'latencyPerTokenMs'): number[] {
  return records.flatMap((r) => (r.status === 'ok' && typeof r[key] === 'number' ? [r[key] as number] : []));
}

/** Every chunk gap of the ok records, pooled (vLLM's and SGLang's "ITL" distribution). */
export function pooledGaps(records: readonly ImportedRecord[]): number[] {
  return records.flatMap((r) => (r.status === 'ok' ? (r.chunkGapsMs ?? []) : []));
}
