/**
 * inferbench against a real engine: llama.cpp's llama-server (CPU build, see global-setup.ts) serving a tiny
 * random-weight llama with GPT-2's vocabulary, 4 slots. Run with `npm run test:llamacpp` (not part of
 * `npm test`). The figures it prints (inferbench vs the server's own timings) are the README's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_SHAPE, makeTinyGguf } from '../../scripts/llamacpp/make-tiny-gguf.js';
import { type RunResult, mean, runInferbench, stageMean } from './inferbench-run.js';
import { type LlamaServer, startLlamaServer } from './llama-server-process.js';
import { type ServerTaskTiming, parseServerTimings } from './server-log.js';
import { backlogIntoNextRow, cacheHits, firstTtftByStage } from './run-checks.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { rowNoteLines } from '../../src/report/row-notes.js';
import { defaultColumns } from '../../src/report/columns.js';
import { rowMarks } from '../../src/report/layouts.js';

const build = inject('llamaServerBuild');
const skipReason = 'skipReason' in build ? build.skipReason : undefined;
if (skipReason !== undefined) console.warn(`llama.cpp suite SKIPPED (environment cannot build llama-server): ${skipReason}`);

const SLOTS = 4;
const PROMPT = 512;
const OUTPUT = 128;
/** 4 slots × (512 + 128) tokens, with room. */
const CTX = 4096;
/** One thread leaves the other core to inferbench, so client overhead does not blur the timings. */
const THREADS = 1;
const RUN_LIMIT_MS = 9 * 60_000;
/** Cached tokens at most this many are a shared first word (chance), not a prefix-cache hit. */
const TRIVIAL_SHARED_PREFIX = 2;
const LENGTHS = ['--prompt-tokens', String(PROMPT), '--output-tokens', String(OUTPUT)];

const fmt = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const report = (title: string, lines: string[]): void => console.log([`[llama.cpp] ${title}`, ...lines.map((l) => `  ${l}`)].join('\n'));

describe.skipIf(skipReason !== undefined)('real llama-server: tiny llama (GPT-2 vocab), CPU, 4 slots', () => {
  let server: LlamaServer;
  let modelDir: string | undefined;

  beforeAll(async () => {
    if (!('dir' in build)) return;
    modelDir = mkdtempSync(join(tmpdir(), 'inferbench-gguf-'));
    const model = join(modelDir, 'tiny-llama.gguf');
    // EOS-prone: without ignore_eos every reply would end after one token (see the --no-force-length test).
    makeTinyGguf(join(build.dir, 'ggml-vocab-gpt-2.gguf'), model, { ...DEFAULT_SHAPE, eosBias: 4 });
    server = await startLlamaServer({ binary: join(build.dir, 'bin/llama-server'), model, parallel: SLOTS, ctx: CTX, threads: THREADS });
    report('setup', [
      `llama-server ${build.dir}${build.buildSeconds !== undefined && build.buildSeconds > 30 ? ` (built in ${build.buildSeconds} s)` : ' (cached build)'}`,
      `model: llama ${DEFAULT_SHAPE.nEmbd} embd × ${DEFAULT_SHAPE.nLayers} layers × ${DEFAULT_SHAPE.nHeads} heads, GPT-2 vocab (50257), f32; --parallel ${SLOTS} -c ${CTX} -t ${THREADS}`,
    ]);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    if (modelDir !== undefined) rmSync(modelDir, { recursive: true, force: true });
  });

  describe('100 requests at concurrency 4', () => {
    let run: RunResult;
    let timings: ServerTaskTiming[];

    beforeAll(async () => {
      const logStart = server.log().length;
      run = await runInferbench(
        server.url,
        ['--profile', 'concurrent', '--concurrency', String(SLOTS), '--max-requests', '100', '--max-seconds', '600', ...LENGTHS, '--tokenizer', 'server', '--seed', '1', '--label', 'llamacpp-100'],
        RUN_LIMIT_MS,
      );
      timings = parseServerTimings(server.log().slice(logStart));
    }, RUN_LIMIT_MS + 60_000);

    it('detects llama.cpp and chooses /v1/completions with ignore_eos (every reply has the full length)', () => {
      expect(run.summary.target.engine).toBe('llamacpp');
      expect(run.summary.target.api).toBe('openai-completions');
      expect(run.summary.target.simulated).toBe(false);
      const ok = run.records.filter((r) => r.status === 'ok');
      expect(ok.length).toBeGreaterThan(0);
      // The model ends every reply at once unless ignore_eos masks end-of-text.
      expect(ok.filter((r) => r.outputTokens !== OUTPUT).map((r) => r.outputTokens)).toEqual([]);
      expect(ok.every((r) => r.tokenCountSource === 'server-usage')).toBe(true);
    });

    it('runs 100 requests with no failures', () => {
      const stage = run.summary.stages[0];
      // The cool-down's requests (sent after the window so its last measured ones never ran on a draining server)
      // are cancelled once every measured one has finished: kept on disk, never failures.
      const failed = run.records.filter((r) => r.status !== 'ok' && r.cooldown !== true);
      report('100 requests', [
        `row: ${stage?.requests.total} requests, ok ${stage?.requests.ok}, errors ${stage?.requests.errors}, incomplete ${stage?.requests.incomplete}, ` +
          `retried on a fresh connection ${stage?.requests.retried ?? 0}, ` +
          `errorsByCode ${JSON.stringify(stage?.errorsByCode)}; requests.jsonl: ${run.records.length} records (ramp-up included), ${failed.length} not ok` +
          (failed[0]?.error ? ` (first: ${failed[0].error.code} ${failed[0].error.message})` : ''),
      ]);
      expect(stage?.requests.total).toBe(100);
      expect(failed.map((r) => r.error?.code ?? r.status)).toEqual([]);
      expect(stage?.requests.ok).toBe(100);
    });

    it('sends prompts of exactly the requested length (the server counts what was asked for)', () => {
      // The server's count is usage.prompt_tokens (cached tokens included), which only answered requests carry.
      const answered = run.records.filter((r) => r.status === 'ok');
      const off = answered.filter((r) => r.promptTokens !== r.requestedPromptTokens || r.promptTokenSource !== 'server-usage');
      report('prompt lengths', [`requested ${PROMPT} tokens; the server counted exactly that for ${answered.length - off.length} of ${answered.length} answered requests`]);
      expect(answered.length).toBeGreaterThanOrEqual(95);
      expect(off.map((r) => ({ id: r.id, requested: r.requestedPromptTokens, server: r.promptTokens, source: r.promptTokenSource }))).toEqual([]);
      expect(run.summary.stages[0]?.promptLengthMismatches).toBe(0);
    });

    it("reports a mean ITL within 2% of the server's own per-token time", () => {
      const full = timings.filter((t) => t.genTokens === OUTPUT);
      const serverItl = mean(full.map((t) => t.perTokenMs));
      const serverPrompt = mean(timings.map((t) => t.promptMs));
      const itl = stageMean(run.summary, 0, 'itlMs');
      const ttft = stageMean(run.summary, 0, 'ttftMs');
      const diff = (itl - serverItl) / serverItl;
      report('ITL vs server', [
        `inferbench mean ITL ${fmt(itl, 3)} ms; server mean per-token ${fmt(serverItl, 3)} ms over ${full.length} tasks; difference ${fmt(100 * diff)}%`,
        `inferbench mean TTFT ${fmt(ttft)} ms; server mean prompt eval ${fmt(serverPrompt)} ms (TTFT also holds queueing, HTTP and the first decode)`,
        `output throughput ${fmt(run.summary.stages[0]?.outputTokenThroughput ?? Number.NaN, 1)} tok/s`,
      ]);
      expect(full.length).toBeGreaterThanOrEqual(run.summary.stages[0]?.requests.ok ?? 100);
      expect(Math.abs(diff)).toBeLessThanOrEqual(0.02);
      // No first token can reach the client before the server has evaluated the prompt.
      expect(ttft).toBeGreaterThanOrEqual(serverPrompt);
    });
  });

  it('without ignore_eos the same model ends its replies at once (so the full lengths above were forced)', async () => {
    const run = await runInferbench(
      server.url,
      ['--profile', 'synchronous', '--max-requests', '3', ...LENGTHS, '--no-force-length', '--seed', '2', '--label', 'llamacpp-noforce'],
      RUN_LIMIT_MS,
      { allowFailedRun: true },
    );
    // The reply is end-of-text alone: llama.cpp counts 1 token, stops, and sends no text (inferbench: E_EMPTY).
    const replies = run.records.map((r) => ({ outputTokens: r.outputTokens, finishReason: r.finishReason, status: r.error?.code ?? r.status }));
    report('--no-force-length', [`replies ${JSON.stringify(replies)} (requested ${OUTPUT})`]);
    expect(replies.length).toBeGreaterThan(0);
    expect(replies.filter((r) => r.finishReason !== 'stop' || r.outputTokens >= OUTPUT)).toEqual([]);
  }, RUN_LIMIT_MS + 60_000);

  it('finds the knee at 4 slots: the server runs 4 at most and queues the rest at 8 streams, TTFT jumps at 8', async () => {
    const run = await runInferbench(
      server.url,
      ['--profile', 'concurrent', '--concurrency', '1,2,4,8', '--max-seconds', '8', ...LENGTHS, '--seed', '3', '--label', 'llamacpp-knee'],
      RUN_LIMIT_MS,
    );
    const rows = [1, 2, 4, 8].map((c) => {
      const s = run.summary.stages.find((st) => st.concurrency === c);
      const server = s ? run.serverPeaks.get(s.index) : undefined;
      return {
        c,
        thr: s?.outputTokenThroughput ?? Number.NaN,
        ttft: s ? stageMean(run.summary, s.index, 'ttftMs') : Number.NaN,
        itl: s ? stageMean(run.summary, s.index, 'itlMs') : Number.NaN,
        errors: s?.requests.errors ?? Number.NaN,
        running: server?.peakRunning ?? Number.NaN,
        waiting: server?.peakWaiting ?? Number.NaN,
      };
    });
    report('concurrency sweep', [
      '| streams | output tok/s | mean TTFT ms | mean ITL ms | failed | server peak running / waiting |',
      ...rows.map((r) => `| ${r.c} | ${fmt(r.thr, 1)} | ${fmt(r.ttft, 1)} | ${fmt(r.itl, 3)} | ${r.errors} | ${r.running} / ${r.waiting} |`),
    ]);
    const [c1, c2, c4, c8] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
    expect(rows.map((r) => r.errors)).toEqual([0, 0, 0, 0]);
    // The server's own gauges (llamacpp:requests_processing / requests_deferred): 8 streams fill the 4 slots
    // and queue the rest; up to 4 nothing waits.
    expect(rows.map((r) => r.running)).toEqual([1, 2, 4, 4]);
    expect([c1.waiting, c2.waiting, c4.waiting]).toEqual([0, 0, 0]);
    expect(c8.waiting).toBeGreaterThan(0);
    // Throughput is printed, not bounded: batching on a CPU gains little (each token's 50257-row output projection
    // is its own work: 949 → 1,480 tok/s from 1 to 4 streams on a quiet machine, docs/accuracy.md) and a CPU-heavy
    // neighbour on the same 2 cores takes more than that (923.7 tok/s at 4 streams against 1,008.3 at 2, seen in
    // CI). The knee itself is the server's gauges above: the slots fill at 4 and the rest wait.
    // At 8 streams half the requests wait for a slot: about one whole reply of queueing.
    expect(c8.ttft).toBeGreaterThan(3 * c4.ttft);
  }, RUN_LIMIT_MS + 60_000);

  describe('default-style sweep with short rows', () => {
    let run: RunResult;
    let timings: ServerTaskTiming[];

    beforeAll(async () => {
      const logStart = server.log().length;
      run = await runInferbench(server.url, ['--profile', 'sweep', '--max-seconds', '3', '--seed', '4', '--label', 'llamacpp-sweep'], RUN_LIMIT_MS);
      timings = parseServerTimings(server.log().slice(logStart));
      const sync = run.summary.stages.find((s) => s.label === 'synchronous');
      const first = firstTtftByStage(run.records);
      report('sweep', [
        '| row | req/s | output tok/s | mean TTFT ms | first request TTFT ms | mean ITL ms | ok | failed | cut |',
        ...run.summary.stages.map(
          (s) =>
            `| ${s.label} | ${fmt(s.requestThroughput)} | ${fmt(s.outputTokenThroughput, 1)} | ${fmt(stageMean(run.summary, s.index, 'ttftMs'), 1)} | ` +
            `${fmt(first.get(s.index) ?? Number.NaN, 1)} | ${fmt(stageMean(run.summary, s.index, 'itlMs'), 3)} | ${s.requests.ok} | ${s.requests.errors} | ${s.requests.incomplete} |`,
        ),
        `synchronous row: mean TTFT ${fmt(sync ? stageMean(run.summary, sync.index, 'ttftMs') : Number.NaN, 1)} ms; server log: ${timings.length} tasks`,
      ]);
    }, RUN_LIMIT_MS + 60_000);

    it('the throughput row measured the in-flight cap it reports (issue 36 item 11a)', () => {
      const row = run.summary.stages.find((s) => s.label === 'throughput');
      const search = row?.window?.capSearch;
      const m = search?.measuredInFlight;
      const peaks = row ? run.serverPeaks.get(row.index) : undefined;
      const note = rowNoteLines(run.summary.stages as unknown as StageSummary[]).find((l) => l.startsWith('throughput: kept'));
      report('throughput row', [
        `cap kept ${search?.cap}; steps ${search?.steps.map((s) => `${s.cap} → ${fmt(s.completionRate, 3)} req/s${s.queued ? ' (queued)' : ''}`).join(', ')}`,
        `window measured in flight: mean ${fmt(m?.mean ?? Number.NaN)}, max ${m?.max}; at open ${row?.window?.inFlightAtOpen}, at close ${row?.window?.inFlightAtClose}; ` +
          `window ${fmt(row?.window?.lengthS ?? Number.NaN, 1)} s from ${fmt(row?.window?.startS ?? Number.NaN, 1)} s; server peak running/waiting ${peaks?.peakRunning}/${peaks?.peakWaiting}`,
        `req/s ${fmt(row?.requestThroughput ?? Number.NaN, 3)}, mean TTFT ${fmt(row ? stageMean(run.summary, row.index, 'ttftMs') : Number.NaN, 1)} ms, warnings: ${JSON.stringify(row?.steadyWarnings ?? [])}`,
        `note: ${note}`,
      ]);
      expect(search).toBeDefined();
      expect(m).toBeDefined();
      const cap = search?.cap as number;
      // Never more than the cap at once, and on average the cap (a completion frees a slot an instant before the next send).
      expect(m?.max).toBeLessThanOrEqual(cap);
      expect(m?.mean as number).toBeGreaterThanOrEqual(cap - Math.max(1, 0.1 * cap));
      expect(row?.window?.inFlightAtOpen).toBeLessThanOrEqual(cap);
      expect(note).toContain(`kept ${cap} requests in flight; the window measured`);
    });

    it('every row holds enough requests to describe its load, or says why not (issue 36 item 11b)', () => {
      const notes = rowNoteLines(run.summary.stages as unknown as StageSummary[]);
      const few = notes.find((l) => l.startsWith('too few requests')) ?? '';
      report('requests per row', [
        ...(run.summary.stages as unknown as StageSummary[]).map((s) => `${rowMarks(s)}: held ${s.requests.total} in a ${fmt(s.durationS, 1)}-s window, req/s ${fmt(s.requestThroughput, 3)}` +
          `${s.targetRate !== undefined ? ` (target ${fmt(s.targetRate, 3)}, sent ${fmt(s.sendRate, 3)})` : ''}${s.fewRequests ? `; too few: ${JSON.stringify(s.fewRequests)}` : ''}`),
        `note: ${few || '(none: every row held enough)'}`,
      ]);
      for (const s of run.summary.stages) {
        if (s.requests.total >= 20) continue;
        expect(s.fewRequests, s.label).toMatchObject({ held: s.requests.total, min: 20 });
        expect(few, s.label).toContain(`${s.label} held ${s.requests.total} requests (min 20)`);
      }
    });

    it('has no failed requests in any row', () => {
      expect(run.summary.stages.length).toBeGreaterThanOrEqual(3);
      expect(run.summary.stages.map((s) => ({ row: s.label, errorsByCode: s.errorsByCode })).filter((s) => Object.keys(s.errorsByCode).length > 0)).toEqual([]);
    });

    it('sends prompts of exactly the requested length with the default tokenizer', () => {
      const answered = run.records.filter((r) => r.status === 'ok');
      const off = answered.filter((r) => r.promptTokens !== r.requestedPromptTokens);
      report('sweep prompt lengths', [`${run.summary.workload}: server count = requested for ${answered.length - off.length} of ${answered.length}`]);
      expect(answered.length).toBeGreaterThan(0);
      expect(off.map((r) => ({ id: r.id, requested: r.requestedPromptTokens, server: r.promptTokens }))).toEqual([]);
      expect(run.summary.stages.map((s) => s.promptLengthMismatches).filter((n) => n > 0)).toEqual([]);
    });

    it('starts every row on an idle server (no backlog from the row before)', () => {
      const backlog = backlogIntoNextRow(run.records, run.summary);
      report('backlog', backlog.details);
      expect(backlog.lateRequests).toEqual([]);
      expect(backlog.slowFirstRequests).toEqual([]);
    });

    it('gets no prefix-cache hits (the server reports no cached prompt tokens)', () => {
      const hits = cacheHits(run.records);
      const evaluated = timings.reduce((a, t) => a + t.promptEvaluated, 0);
      const sent = run.records.filter((r) => r.status === 'ok').reduce((a, r) => a + r.promptTokens, 0);
      // A first word shared with the slot's previous prompt (1–2 tokens) is chance, not a cache hit.
      const real = hits.clientHits.filter((h) => h.cachedTokens > TRIVIAL_SHARED_PREFIX);
      report('cache', [
        `requests with cached prompt tokens: ${hits.clientHits.length} of ${hits.withCacheField}; more than ${TRIVIAL_SHARED_PREFIX}: ${real.length}` +
          (real.length > 0
            ? ` (${real.reduce((a, h) => a + h.cachedTokens, 0)} tokens in all, max ${Math.max(...real.map((h) => h.cachedTokens))}, in rows ${[...new Set(real.map((h) => h.row))].join(',')})`
            : ''),
        `server log: ${timings.length} tasks evaluated ${evaluated} prompt tokens; successful requests sent ${sent}`,
      ]);
      expect(hits.withCacheField).toBeGreaterThan(0);
      expect(real.length).toBe(0);
      // A shared first token is chance: the table shows no Cache hit column and no row carries ‡ (item 11d).
      const stages = run.summary.stages as unknown as StageSummary[];
      report('cache column', [`default columns: ${defaultColumns('sweep', stages).join(', ')}; rows with ‡: ${stages.filter((s) => s.unintendedCache).length}`]);
      expect(defaultColumns('sweep', stages)).not.toContain('cache');
      expect(stages.filter((s) => s.unintendedCache)).toEqual([]);
    });
  });
});
