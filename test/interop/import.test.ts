import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isUserError } from '../../src/core/errors.js';
import { importSource } from '../../src/interop/index.js';
import { errorCodeOf } from '../../src/interop/mapper.js';
import { AIPERF_DIR, GENAI_DIR, GUIDELLM, guidellmSuccessful, importAndOpen, PEER, SGLANG, sourceJson, VLLM } from './helpers.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'ib-import-src-'));
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
type Item = Record<string, unknown>;

describe('import GuideLLM 0.7 benchmarks.json (real file: llama.cpp, 8 streams, 50 requests)', () => {
  const src = sourceJson(GUIDELLM);
  const { run, lines } = importAndOpen(GUIDELLM);
  const stage = run.summary.stages[0]!;
  const b = (src['benchmarks'] as Item[])[0]!;

  it('carries the figures GuideLLM defines as inferbench does, exactly', () => {
    const ttft = guidellmSuccessful(src, 'time_to_first_token_ms');
    const m = stage.metrics;
    expect(m.ttftMs?.mean).toBe(ttft['mean']);
    expect(m.ttftMs?.median).toBe(ttft['median']);
    expect(m.ttftMs?.p99).toBe(ttft.percentiles['p99']);
    expect(m.ttftMs?.p90).toBe(ttft.percentiles['p90']);
    expect(m.ttftMs?.stddev).toBe(ttft['std_dev']);
    expect(m.ttftMs?.count).toBe(ttft['count']);
    const latency = guidellmSuccessful(src, 'request_latency');
    expect(m.e2eMs?.mean).toBe(latency['mean']! * 1000);
    expect(m.e2eMs?.p95).toBe(latency.percentiles['p95']! * 1000);
    expect(m.promptTokens?.mean).toBe(guidellmSuccessful(src, 'prompt_token_count')['mean']);
    expect(m.outputTokens?.mean).toBe(guidellmSuccessful(src, 'output_token_count')['mean']);
    expect(stage.durationS).toBe(b['duration']);
    const concurrency = ((b['metrics'] as Item)['request_concurrency'] as Item)['total'] as Item;
    expect(stage.meanConcurrency).toBe(concurrency['mean']);
  });

  it('recomputes ITL per request (GuideLLM weights its aggregate by tokens) and derives throughput by inferbench formulas', () => {
    const items = ((b['requests'] as Item)['successful'] as Item[]).map((r) => r['inter_token_latency_ms'] as number);
    expect(stage.metrics.itlMs?.count).toBe(50);
    expect(guidellmSuccessful(src, 'inter_token_latency_ms')['count']).toBe(1550); // token-weighted: not what inferbench means
    expect(stage.metrics.itlMs?.mean).toBeCloseTo(mean(items), 10);
    const out = guidellmSuccessful(src, 'output_token_count')['total_sum']!;
    expect(stage.outputTokenThroughput).toBe(out / (b['duration'] as number));
    expect(stage.requestThroughput).toBe(50 / (b['duration'] as number));
    // GuideLLM's own time-series means are another quantity: not carried.
    expect(stage.outputTokenThroughput).not.toBeCloseTo(guidellmSuccessful(src, 'output_tokens_per_second')['mean']!, 0);
  });

  it('leaves out what it cannot map, and says so', () => {
    expect(stage.metrics.chunkGapMs).toBeUndefined();
    expect(run.summary.notes.some((n) => n.startsWith('left out: time_per_output_token_ms (TPOT)'))).toBe(true);
    expect(run.summary.notes.some((n) => n.startsWith('left out: chunk gap'))).toBe(true);
  });

  it('describes the row, the run and its source', () => {
    expect(stage).toMatchObject({ label: 'concurrent@8', kind: 'closed', concurrency: 8, requests: { total: 50, ok: 50, errors: 0 } });
    expect(run.summary.context).toMatchObject({ model: 'tiny-llama-gpt2vocab.gguf', promptTokens: 64, outputTokens: 32, label: 'guidellm 0.7.3.post0+gee7a774' });
    expect(run.summary.target).toMatchObject({ url: 'http://127.0.0.1:8090', api: 'openai-completions' });
    expect(run.summary.createdAt).toBe(new Date((b['start_time'] as number) * 1000).toISOString());
    expect(run.manifest?.command).toBe('import');
    expect(run.manifest?.source).toEqual({ tool: 'guidellm', version: '0.7.3.post0+gee7a774', file: GUIDELLM });
  });

  it('writes every request in inferbench record form', () => {
    expect(lines).toHaveLength(50);
    const items = (b['requests'] as Item)['successful'] as Item[];
    const first = items[0]!;
    const line = lines.find((l) => l['serverRequestId'] === first['response_id'])!;
    expect(line).toMatchObject({ schemaVersion: 1, stage: 0, warmup: false, status: 'ok', ttftMs: first['time_to_first_token_ms'], itlMs: first['inter_token_latency_ms'], outputTokens: 32, chunks: 32 });
    expect(line['e2eMs']).toBe((first['request_latency'] as number) * 1000);
    expect(Math.min(...lines.map((l) => l['sentAtMs'] as number))).toBe(0);
    expect(line['chunkGapsMs']).toBeUndefined(); // unknown: left out of the line, never an empty list
  });
});

describe('import GuideLLM sweeps, failures and sampled requests (the real file, edited)', () => {
  const src = sourceJson(GUIDELLM);
  const b = (src['benchmarks'] as Item[])[0]!;
  const write = (doc: unknown): string => {
    const path = join(tmp(), 'benchmarks.json');
    writeFileSync(path, JSON.stringify(doc));
    return path;
  };
  const withStrategy = (strategy: Item): Item => ({ ...b, config: { ...(b['config'] as Item), strategy } });

  it('makes one stage per benchmark of a sweep, and marks an open row far under its target', () => {
    const sweep = { ...src, benchmarks: [withStrategy({ type_: 'synchronous' }), b, withStrategy({ type_: 'constant', rate: 20 }), withStrategy({ type_: 'poisson', rate: 40 }), withStrategy({ type_: 'throughput', max_concurrency: 512 })] };
    const { run, lines } = importAndOpen(write(sweep));
    expect(run.summary.stages.map((s) => s.label)).toEqual(['synchronous', 'concurrent@8', 'asynchronous@20.00 req/sec', 'asynchronous@40.00 req/sec', 'throughput']);
    expect(run.summary.stages.map((s) => s.kind)).toEqual(['closed', 'closed', 'open', 'open', 'burst']);
    // 24.6 req/s completed: keeps up with 20, not with 40 (under 80% of it over the whole benchmark).
    expect(run.summary.stages[2]!.belowTarget).toBe(false);
    expect(run.summary.stages[3]).toMatchObject({ belowTarget: true, targetRate: 40 });
    expect(run.summary.stages[3]!.overload).toContain('of the 40.00 req/s target');
    expect(lines).toHaveLength(250);
    expect(new Set(lines.map((l) => l['stage']))).toEqual(new Set([0, 1, 2, 3, 4]));
    expect(new Set(lines.map((l) => l['id'])).size).toBe(250);
  });

  it('counts failed requests by code from their messages', () => {
    const requests = b['requests'] as Item;
    const [failed, ...ok] = requests['successful'] as Item[];
    const errored = { ...failed!, info: { ...(failed!['info'] as Item), status: 'errored', error: "HTTPStatusError: Server error '500 Internal Server Error' for url 'http://127.0.0.1:8090/v1/completions'" } };
    const metrics = { ...(b['metrics'] as Item), request_totals: { successful: 49, errored: 1, incomplete: 0, total: 50 } };
    const { run, lines } = importAndOpen(write({ ...src, benchmarks: [{ ...b, metrics, requests: { ...requests, successful: ok, errored: [errored] } }] }));
    const stage = run.summary.stages[0]!;
    expect(stage.requests).toMatchObject({ total: 50, ok: 49, errors: 1 });
    expect(stage.errorsByCode).toEqual({ 'E_HTTP_STATUS:500': 1 });
    expect(stage.firstError).toMatch(/^E_HTTP_STATUS:500: HTTPStatusError/);
    expect(lines.filter((l) => l['status'] === 'error')).toHaveLength(1);
  });

  it('leaves ITL out when the file holds a sample of the requests only (--sample-size)', () => {
    const requests = b['requests'] as Item;
    const sampled = { ...b, requests: { ...requests, successful: (requests['successful'] as Item[]).slice(0, 10) } };
    const { run, lines } = importAndOpen(write({ ...src, benchmarks: [sampled] }));
    expect(run.summary.stages[0]!.metrics.itlMs).toBeUndefined();
    expect(run.summary.stages[0]!.metrics.ttftMs?.count).toBe(50);
    expect(run.summary.notes).toContain('requests.jsonl holds the sample of requests GuideLLM kept (--sample-size), not every request');
    expect(lines).toHaveLength(10);
  });
});

describe('import vLLM bench serve --save-result --save-detailed (real file)', () => {
  const src = sourceJson(VLLM);
  const { run, lines } = importAndOpen(VLLM);
  const stage = run.summary.stages[0]!;
  const m = stage.metrics;

  it("maps TTFT, TPOT → ITL and ITL → chunk gap, carrying vLLM's figures exactly", () => {
    expect(m.ttftMs?.mean).toBe(src['mean_ttft_ms']);
    expect(m.ttftMs?.median).toBe(src['median_ttft_ms']);
    expect(m.ttftMs?.stddev).toBe(src['std_ttft_ms']);
    expect(m.ttftMs?.p99).toBe(src['p99_ttft_ms']);
    expect(m.itlMs?.mean).toBe(src['mean_tpot_ms']);
    expect(m.itlMs?.p99).toBe(src['p99_tpot_ms']);
    expect(m.chunkGapMs?.mean).toBe(src['mean_itl_ms']);
    expect(m.chunkGapMs?.p99).toBe(src['p99_itl_ms']);
    expect(m.chunkGapMs?.count).toBe((src['itls'] as number[][]).reduce((n, l) => n + l.length, 0));
    expect(stage.requestThroughput).toBe(src['request_throughput']);
    expect(stage.outputTokenThroughput).toBe(src['output_throughput']);
    expect(stage.totalTokenThroughput).toBe(src['total_token_throughput']);
    expect(stage.promptTokenThroughput).toBe((src['total_input_tokens'] as number) / (src['duration'] as number));
  });

  it('fills the percentiles vLLM did not write from its per-request arrays', () => {
    const ttfts = (src['ttfts'] as number[]).map((t) => t * 1000);
    expect(m.ttftMs?.min).toBe(Math.min(...ttfts));
    expect(m.ttftMs?.max).toBe(Math.max(...ttfts));
    expect(Number.isFinite(m.ttftMs?.p90)).toBe(true);
  });

  it('leaves out E2EL (it ends at the last content message, not the stream end)', () => {
    expect(m.e2eMs).toBeUndefined();
    expect(run.summary.notes.some((n) => n.startsWith('left out: request latency (E2EL)'))).toBe(true);
    expect(lines.every((l) => l['e2eMs'] === undefined)).toBe(true);
  });

  it('writes the --save-detailed arrays as records', () => {
    expect(lines).toHaveLength(50);
    const itls = (src['itls'] as number[][])[2]!;
    const n = (src['output_lens'] as number[])[2]!;
    expect(lines[2]!['chunkGapsMs']).toHaveLength(itls.length);
    expect(lines[2]!['itlMs']).toBeCloseTo((itls.reduce((a, g) => a + g, 0) * 1000) / (n - 1), 9);
    expect(lines[2]!['ttftMs']).toBe((src['ttfts'] as number[])[2]! * 1000);
  });

  it('on a chat endpoint leaves TTFT, ITL and chunk gaps out (its first message may be a role-only delta)', () => {
    const dir = tmp();
    const chat = join(dir, 'chat.json');
    writeFileSync(chat, JSON.stringify({ ...src, backend: 'openai-chat', endpoint_type: 'openai-chat' }));
    const { run: c, lines: cl } = importAndOpen(chat);
    const cm = c.summary.stages[0]!.metrics;
    expect(cm.ttftMs).toBeUndefined();
    expect(cm.itlMs).toBeUndefined();
    expect(cm.chunkGapMs).toBeUndefined();
    expect(c.summary.stages[0]!.requestThroughput).toBe(src['request_throughput']);
    expect(c.summary.notes.some((n) => n.startsWith('left out: TTFT, ITL and chunk gap'))).toBe(true);
    expect(cl[0]!['ttftMs']).toBeUndefined();
  });

  it('reads --append-result files (one object a line) as one stage each', () => {
    const dir = tmp();
    const appended = join(dir, 'appended.json');
    const two = { ...src, request_rate: 4, max_concurrency: null };
    writeFileSync(appended, `${JSON.stringify(src)}\n${JSON.stringify(two)}\n`);
    const { run: a } = importAndOpen(appended);
    expect(a.summary.stages.map((s) => s.label)).toEqual(['concurrent@8', 'asynchronous@4.00 req/sec']);
    expect(a.summary.stages[1]).toMatchObject({ kind: 'open', targetRate: 4 });
  });
});

describe('import SGLang bench_serving JSONL (real file)', () => {
  const src = sourceJson(SGLANG);
  const { run, lines } = importAndOpen(SGLANG);
  const stage = run.summary.stages[0]!;
  const m = stage.metrics;

  it("reads Python's Infinity and carries TTFT, e2e, chunk gap and concurrency exactly", () => {
    expect(src['request_rate']).toBe(Number.POSITIVE_INFINITY);
    expect(stage).toMatchObject({ label: 'concurrent@8', kind: 'closed', concurrency: 8 });
    expect(m.ttftMs?.mean).toBe(src['mean_ttft_ms']);
    expect(m.ttftMs?.p99).toBe(src['p99_ttft_ms']);
    expect(m.e2eMs?.mean).toBe(src['mean_e2e_latency_ms']);
    expect(m.e2eMs?.median).toBe(src['median_e2e_latency_ms']);
    expect(m.chunkGapMs?.p95).toBe(src['p95_itl_ms']);
    expect(stage.meanConcurrency).toBe(src['concurrency']);
    expect(stage.outputTokenThroughput).toBe(src['output_throughput']);
    expect(stage.promptTokenThroughput).toBe(src['input_throughput']);
    expect(run.summary.context).toMatchObject({ promptTokens: 64, outputTokens: 32 });
    expect(lines).toHaveLength(0);
  });

  it('leaves out ITL (SGLang TPOT runs to the stream end) and unknown failures, and says so', () => {
    expect(m.itlMs).toBeUndefined();
    expect(run.summary.notes.some((n) => n.startsWith('left out: ITL (SGLang TPOT)'))).toBe(true);
    expect(run.summary.notes.some((n) => n.startsWith('left out: failed requests'))).toBe(true);
  });

  it('with --output-details computes ITL per request and counts failures', () => {
    const dir = tmp();
    const path = join(dir, 'details.jsonl');
    const line = { ...src, completed: 2, input_lens: [64, 64, 64], output_lens: [5, 5, 0], ttfts: [0.04, 0.05, 0], itls: [[0.01, 0.01, 0.01, 0.01], [0.02, 0.02, 0.02, 0.02], []], errors: ['', '', 'HTTP 503 Service Unavailable'], generated_texts: ['a', 'b', ''] };
    // As Python writes it: request_rate inf is the bare token Infinity.
    writeFileSync(path, `${JSON.stringify(line).replace('"request_rate":null', '"request_rate":Infinity')}\n`);
    const { run: d, lines: dl } = importAndOpen(path);
    const s = d.summary.stages[0]!;
    expect(s.metrics.itlMs?.mean).toBeCloseTo(15, 9);
    expect(s.requests).toMatchObject({ ok: 2, errors: 1 });
    expect(s.errorsByCode).toEqual({ 'E_HTTP_STATUS:503': 1 });
    expect(dl.map((l) => l['status'])).toEqual(['ok', 'ok', 'error']);
  });
});

describe('import AIPerf (hand-made from its documented format)', () => {
  const src = sourceJson(join(AIPERF_DIR, 'profile_export_aiperf.json'));
  const { run, lines } = importAndOpen(AIPERF_DIR);
  const stage = run.summary.stages[0]!;

  it('carries TTFT and ITL, makes the sample stddev a population one, and reads the per-record file beside it', () => {
    const ttft = src['time_to_first_token'] as Record<string, number>;
    expect(stage.metrics.ttftMs?.mean).toBe(ttft['avg']);
    expect(stage.metrics.ttftMs?.p99).toBe(ttft['p99']);
    expect(stage.metrics.ttftMs?.stddev).toBeCloseTo(ttft['std']! * Math.sqrt(1 / 2), 12);
    expect(stage.metrics.itlMs?.mean).toBe((src['inter_token_latency'] as Record<string, number>)['avg']);
    expect(stage.metrics.chunkGapMs?.count).toBe(8);
    expect(stage.metrics.e2eMs).toBeUndefined();
    expect(stage.durationS).toBe((src['benchmark_duration'] as Record<string, number>)['avg']);
    expect(stage.requestThroughput).toBe((src['request_throughput'] as Record<string, number>)['avg']);
    expect(stage.requests).toMatchObject({ ok: 2, errors: 1 });
    expect(stage.errorsByCode).toEqual({ 'E_HTTP_STATUS:429': 1 });
    expect(lines.map((l) => l['warmup'])).toEqual([true, false, false, false]);
    expect(run.summary.notes.some((n) => n.includes("read from AIPerf's documentation"))).toBe(true);
  });

  it('imports the summary file alone the same way, and refuses the per-record file alone', () => {
    const alone = importSource(join(AIPERF_DIR, 'profile_export_aiperf.json'));
    expect(alone.summary.stages[0]!.metrics.ttftMs).toEqual(stage.metrics.ttftMs);
    expect(() => importSource(join(AIPERF_DIR, 'profile_export.jsonl'))).toThrow(/is AIPerf's per-record file/);
  });
});

describe('import a genai-bench experiment folder (hand-made from its documented format)', () => {
  const { run, lines } = importAndOpen(GENAI_DIR);

  it('makes one stage per run file, in concurrency order, with times in ms', () => {
    const runFile = sourceJson(join(GENAI_DIR, 'D64_32_text-to-text_num_concurrency_8_time_1s.json'));
    const agg = runFile['aggregated_metrics'] as Record<string, Record<string, Record<string, number>>>;
    expect(run.summary.stages.map((s) => s.label)).toEqual(['synchronous', 'concurrent@8']);
    const c8 = run.summary.stages[1]!;
    expect(c8.metrics.ttftMs?.mean).toBe(agg['stats']!['ttft']!['mean']! * 1000);
    expect(c8.metrics.e2eMs?.p99).toBe(agg['stats']!['e2e_latency']!['p99']! * 1000);
    expect(c8.metrics.itlMs).toBeUndefined();
    expect(c8.errorsByCode).toEqual({ 'E_HTTP_STATUS:503': 1 });
    expect(run.summary.context).toMatchObject({ engine: 'llama.cpp', engineVersion: 'b4500', gpu: 'H100', gpus: 1 });
    expect(lines).toHaveLength(6);
  });
});

describe('detection by content, and bad inputs', () => {
  it('tells the tool from the content, not the file name', () => {
    const dir = tmp();
    copyFileSync(GUIDELLM, join(dir, 'vllm-results.jsonl'));
    copyFileSync(VLLM, join(dir, 'benchmarks.json'));
    expect(importSource(join(dir, 'vllm-results.jsonl')).source.tool).toBe('guidellm');
    expect(importSource(join(dir, 'benchmarks.json')).source.tool).toBe('vllm-bench-serve');
  });

  const fails = (path: string): { message: string; hint: string } => {
    try {
      importSource(path);
    } catch (err) {
      expect(isUserError(err)).toBe(true);
      const e = err as { message: string; hint?: string };
      return { message: e.message, hint: e.hint ?? '' };
    }
    throw new Error(`${path} imported`);
  };

  it('says what is wrong, naming the file, for unknown, unreadable, empty and truncated files', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'other.json'), '{"hello": 1}');
    expect(fails(join(dir, 'other.json')).message).toBe(`${join(dir, 'other.json')}: not a result file inferbench can import`);
    expect(fails(join(dir, 'missing.json')).message).toBe(`cannot read ${join(dir, 'missing.json')}: no such file`);
    writeFileSync(join(dir, 'empty.json'), '');
    expect(fails(join(dir, 'empty.json')).message).toContain('is empty');
    writeFileSync(join(dir, 'cut.json'), readFileSync(GUIDELLM, 'utf8').slice(0, 5000));
    const cut = fails(join(dir, 'cut.json'));
    expect(cut.message).toMatch(/cut\.json is not valid JSON \(/);
    expect(cut.hint).toContain('truncated');
    writeFileSync(join(dir, 'torn.jsonl'), `${readFileSync(SGLANG, 'utf8').trim()}\n{"backend": "vllm", "dur`);
    const torn = fails(join(dir, 'torn.jsonl'));
    expect(torn.message).toContain('torn.jsonl: line 2 is not valid JSON');
    expect(torn.hint).toContain('truncated');
  });

  it('turns HTTP statuses in error texts into codes, and nothing else', () => {
    expect(errorCodeOf("HTTPStatusError: Client error '429 Too Many Requests' for url")).toEqual({ code: 'E_HTTP_STATUS:429', httpStatus: 429 });
    expect(errorCodeOf('status code 500')).toEqual({ code: 'E_HTTP_STATUS:500', httpStatus: 500 });
    expect(errorCodeOf('cannot allocate 512 tokens')).toEqual({ code: 'E_IMPORTED' });
    expect(PEER).toContain('peer-outputs');
  });
});
