import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { StageSummary } from '../../src/metrics/summary.js';
import { llmdReport, llmdReports } from '../../src/interop/llmd.js';
import { openRunDir, type StoredRun } from '../../src/store/run-store.js';
import { runCli } from '../helpers/cli.js';
import { GUIDELLM, importAndOpen, VLLM } from './helpers.js';

/**
 * The llm-d benchmark report v0.2 as formats.md §1 gives it (llm-d-benchmark's schema_v0_2.py): objects reject
 * unknown keys, and each figure accepts only units of its own kind. Only what inferbench writes is spelled out in
 * full; the rest of the schema is optional and inferbench leaves it out.
 */
const TIME = ['ms', 's'] as const;
const GEN_LATENCY = ['ms/token', 's/token'] as const;
const QUANTITY = ['count', 'pixels'] as const;
const n = z.number().optional();
const statistics = (units: readonly [string, ...string[]]) =>
  z.strictObject({ units: z.enum(units), mean: z.number(), mode: n, stddev: z.number().min(0).optional(), min: n, p0p1: n, p1: n, p5: n, p10: n, p25: n, p50: n, p75: n, p90: n, p95: n, p99: n, p99p9: n, max: n });
const seqLen = z.strictObject({ distribution: z.enum(['fixed', 'gaussian', 'uniform', 'other']), value: z.number().min(0), std_dev: z.number().min(0).optional(), min: z.number().int().min(0).optional(), max: z.number().int().min(1).optional() });
const native = z.strictObject({ args: z.record(z.string(), z.unknown()).optional(), envars: z.record(z.string(), z.unknown()).optional(), config: z.unknown().optional() });
const engine = z.strictObject({
  kind: z.literal('inference_engine'),
  tool: z.string(),
  tool_version: z.string(),
  role: z.enum(['replica', 'prefill', 'decode']),
  replicas: z.number().int().min(1),
  model: z.strictObject({ name: z.string() }),
  accelerator: z.strictObject({
    model: z.string(),
    count: z.number().int().min(0),
    parallelism: z.strictObject({ tp: n, dp: n, dp_local: n, workers: n, ep: n, pp: n }),
  }),
});
const generic = z.looseObject({ kind: z.literal('generic'), tool: z.string(), tool_version: z.string() });
const reportSchema = z.strictObject({
  version: z.literal('0.2'),
  run: z.strictObject({
    uid: z.string(),
    eid: z.string().optional(),
    cid: z.string().optional(),
    pid: z.string().optional(),
    time: z.strictObject({ start: z.string().regex(/^\d{4}-\d\d-\d\dT/).optional(), end: z.string().regex(/^\d{4}-\d\d-\d\dT/).optional(), duration: z.string().regex(/^PT[\d.]+S$/).optional() }).optional(),
    user: z.string().optional(),
    description: z.string().optional(),
    keywords: z.array(z.string()).optional(),
  }),
  scenario: z.strictObject({
    stack: z.array(z.strictObject({ metadata: z.strictObject({ schema_version: z.string().optional(), label: z.string(), cfg_id: z.string(), description: z.string().optional() }), standardized: z.union([engine, generic]), native })),
    load: z.strictObject({
      metadata: z.strictObject({ schema_version: z.string().optional(), cfg_id: z.string().optional(), description: z.string().optional() }),
      standardized: z.strictObject({
        tool: z.string(),
        tool_version: z.string(),
        parallelism: z.number().int().min(1).optional(),
        source: z.enum(['random', 'sampled', 'unknown']),
        stage: z.number().int().min(0).optional(),
        input_seq_len: seqLen,
        output_seq_len: seqLen.optional(),
        rate_qps: z.number().gt(0).optional(),
        concurrency: z.number().int().min(1).optional(),
      }),
      native,
    }),
  }),
  results: z.strictObject({
    request_performance: z.strictObject({
      aggregate: z.strictObject({
        requests: z.strictObject({ total: z.number().int().min(0), failures: z.number().int().min(0).optional(), incomplete: z.number().int().min(0).optional(), input_length: statistics(QUANTITY).optional(), output_length: statistics(QUANTITY).optional() }),
        latency: z.strictObject({
          time_to_first_token: statistics(TIME).optional(),
          normalized_time_per_output_token: statistics(GEN_LATENCY).optional(),
          time_per_output_token: statistics(GEN_LATENCY).optional(),
          inter_token_latency: statistics(GEN_LATENCY).optional(),
          request_latency: statistics(TIME).optional(),
        }),
        throughput: z.strictObject({ input_token_rate: statistics(['tokens/s']).optional(), output_token_rate: statistics(['tokens/s']).optional(), total_token_rate: statistics(['tokens/s']).optional(), request_rate: statistics(['queries/s']).optional() }),
      }),
    }),
  }),
});

type Report = z.infer<typeof reportSchema>;

function valid(doc: unknown): Report {
  const parsed = reportSchema.safeParse(doc);
  if (!parsed.success) throw new Error(`not a v0.2 report: ${JSON.stringify(parsed.error.issues[0])}`);
  return parsed.data;
}

let root: string;
let sweep: StoredRun;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-llmd-'));
  const out = join(root, 'sweep');
  const r = await runCli(['predict', '--profile', 'sweep', '--max-requests', '60', '--sweep-rates', '2', '--prompt-tokens', '256', '--output-tokens', '64', '--label', 'llmd-test', '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  sweep = openRunDir(out);
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The figures of one row, as its report must carry them. */
function expectFigures(report: Report, s: StageSummary): void {
  const agg = report.results.request_performance.aggregate;
  const m = s.metrics;
  expect(agg.requests).toMatchObject({ total: s.requests.total, failures: s.requests.errors, incomplete: s.requests.incomplete });
  if (m.ttftMs) expect(agg.latency.time_to_first_token).toMatchObject({ units: 'ms', mean: m.ttftMs.mean, p50: m.ttftMs.median, p99: m.ttftMs.p99 });
  if (m.itlMs) expect(agg.latency.time_per_output_token).toMatchObject({ units: 'ms/token', mean: m.itlMs.mean, p90: m.itlMs.p90 });
  if (m.chunkGapMs) expect(agg.latency.inter_token_latency).toMatchObject({ units: 'ms/token', mean: m.chunkGapMs.mean });
  else expect(agg.latency.inter_token_latency).toBeUndefined();
  if (m.e2eMs) expect(agg.latency.request_latency).toMatchObject({ units: 'ms', mean: m.e2eMs.mean, max: m.e2eMs.max });
  else expect(agg.latency.request_latency).toBeUndefined();
  if (m.latencyPerOutputTokenMs) expect(agg.latency.normalized_time_per_output_token).toMatchObject({ units: 'ms/token', mean: m.latencyPerOutputTokenMs.mean });
  expect(agg.throughput.request_rate).toEqual({ units: 'queries/s', mean: s.requestThroughput });
  expect(agg.throughput.output_token_rate).toEqual({ units: 'tokens/s', mean: s.outputTokenThroughput });
  expect(report.scenario.load.standardized.stage).toBe(s.index);
}

describe('report --format llmd: the llm-d benchmark report v0.2', () => {
  it("writes one valid report per row of an inferbench run, with the row's figures and load", () => {
    const reports = llmdReports(sweep);
    expect(reports).toHaveLength(sweep.summary.stages.length);
    expect(reports[0]?.file).toBe(`benchmark_report_v0.2,_${sweep.name}_0.json`);
    for (const [i, s] of sweep.summary.stages.entries()) {
      const report = valid(reports[i]?.doc);
      expectFigures(report, s);
      const load = report.scenario.load.standardized;
      // A prediction generates no prompt text ("lengths only"): llm-d's source is then unknown.
      expect(load).toMatchObject({ tool: 'inferbench', source: 'unknown', input_seq_len: { distribution: 'fixed', value: 256 }, output_seq_len: { distribution: 'fixed', value: 64 } });
      if (s.kind === 'open') expect(load.rate_qps).toBe(s.targetRate);
      if (s.kind === 'closed') expect(load.concurrency).toBe(s.concurrency);
      expect(report.run.eid).toBe(sweep.summary.runId);
    }
    const stack = valid(reports[0]?.doc).scenario.stack[0]?.standardized;
    expect(stack).toMatchObject({ kind: 'inference_engine', tool: sweep.summary.target.engine, accelerator: { model: 'A100-80GB', count: 1 } });
  });

  it('writes imported runs too, naming the tool that measured them and leaving out what it left out', () => {
    const { run: g } = importAndOpen(GUIDELLM);
    const gr = valid(llmdReport(g, g.summary.stages[0]!));
    expectFigures(gr, g.summary.stages[0]!);
    expect(gr.scenario.load.standardized).toMatchObject({ tool: 'guidellm', tool_version: '0.7.3.post0+gee7a774', concurrency: 8 });
    expect(gr.scenario.stack[0]?.standardized).toMatchObject({ kind: 'generic', tool: 'unknown' });
    const { run: v } = importAndOpen(VLLM);
    const vr = valid(llmdReport(v, v.summary.stages[0]!));
    expectFigures(vr, v.summary.stages[0]!);
    expect(vr.scenario.load.standardized.tool).toBe('vllm-benchmark');
    expect(vr.results.request_performance.aggregate.latency.inter_token_latency?.mean).toBe(v.summary.stages[0]!.metrics.chunkGapMs?.mean);
  });
});
