/**
 * Prefill/decode disaggregation (issue 34 item 3): `sim --pd P:D` over HTTP and `predict --pd P:D` in virtual time, one
 * PdEngine (src/sim/cluster/pd.ts) under both. What is asserted is deterministic: the order of a request's events and
 * the transfer time computed from the link (virtual time, or the sim's own ground truth on its clock); the HTTP row is
 * compared with predict at the tolerances of the cluster agreement test (test/sim/cluster.test.ts), which leave room
 * for a busy 2-core machine, not for a model error. Rows are short (24 requests of 1024 tokens in, 16 out).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummaryDoc } from '../../src/report/run-summary.js';
import { LINK_PRIORS } from '../../src/sim/catalog/hardware.js';
import { kvTransferLink, kvTransferMs, parsePdSplit, PdEngine } from '../../src/sim/cluster/pd.js';
import { resolveSimEngine } from '../../src/sim/create.js';
import { VirtualDriver } from '../../src/sim/des/virtual-driver.js';
import { startSimServer, type SimServer, type TruthRecord } from '../../src/sim/server/index.js';
import { createVirtualStageRunner } from '../../src/sim/virtual-runner.js';
import { createWorkload } from '../../src/workload/create.js';
import { loadApproxTokenizer } from '../../src/workload/tokenizer.js';
import { runCli } from '../helpers/cli.js';
import { readRunFolder } from '../helpers/run-folder.js';

const ENGINE = { engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 } as const;

/** The model's own time for one prefill of `tokens` new tokens after `prior` cached ones, alone in its step (ms). */
function prefillAloneMs(tokens: number, prior = 0): number {
  const r = resolveSimEngine(ENGINE);
  return r.config.cost.stepMs({ decodeSeqs: 0, decodeCtxSum: 0, prefillCount: 1, prefillPrior: [prior], prefillTokens: [tokens], emittingSeqs: 0 }) * r.config.timeScale;
}

describe('PdEngine in virtual time', () => {
  it('prefills on the prefill engine, moves the KV, decodes on the decode engine: TTFT after prefill + transfer', () => {
    const r = resolveSimEngine(ENGINE);
    const split = { prefill: 1, decode: 2 };
    const link = kvTransferLink(r, split);
    const clock = new VirtualDriver();
    const pd = new PdEngine(r.config, clock, split, link);
    type Events = { prefillStart?: number; prefillEnd?: number; transferEnd?: number; tokens: number[]; finish?: string };
    const events: Events[] = [];
    const routes: { prefill: number; decode: number }[] = [];
    for (let i = 0; i < 4; i++) {
      const e: Events = { tokens: [] };
      events.push(e);
      const h = pd.submit({ promptTokens: 1000, maxTokens: 8, ignoreEos: true }, {
        onPrefillStart: (at) => void (e.prefillStart = at),
        onPrefillEnd: (at) => void (e.prefillEnd = at),
        onTransferEnd: (at) => void (e.transferEnd = at),
        onToken: (_i, at) => void e.tokens.push(at),
        onFinish: (reason) => void (e.finish = reason),
      });
      routes.push(h.route as { prefill: number; decode: number });
    }
    clock.runWhile(() => events.some((e) => e.finish === undefined));
    // Least load in each pool: one prefill engine, the decode engines in turn.
    expect(routes).toEqual([{ prefill: 0, decode: 0 }, { prefill: 0, decode: 1 }, { prefill: 0, decode: 0 }, { prefill: 0, decode: 1 }]);
    const transfer = kvTransferMs(link, 1000);
    // 1000 tokens × 56 KiB per token (Qwen2-7B: 28 layers × 2 × 4 KV heads × 128 × 2 bytes) over A100's fitted link.
    expect(link.bytesPerTokenPerGpu).toBe(28 * 2 * 4 * 128 * 2);
    expect(transfer).toBeCloseTo(link.alphaUs / 1000 + (1000 * link.bytesPerTokenPerGpu) / (link.betaGBs * 1e6), 12);
    let linkFree = -Infinity;
    for (const e of events) {
      expect(e.finish).toBe('length');
      expect(e.tokens).toHaveLength(8);
      const { prefillStart, prefillEnd, transferEnd } = e as Required<Events>;
      // One prefill engine's transfers go one after another over its link.
      expect(transferEnd).toBeCloseTo(Math.max(prefillEnd, linkFree) + transfer, 9);
      linkFree = transferEnd;
      expect(prefillEnd - prefillStart).toBeGreaterThanOrEqual(prefillAloneMs(1000) - 1e-9);
      expect(e.tokens[0] as number).toBeGreaterThan(transferEnd);
    }
    // Decode engines never prefill a transferred prompt; prefill engines never emit a token.
    for (const d of pd.decode) expect(d.stats().promptTokensTotal).toBe(0);
    for (const p of pd.prefill) expect(p.stats().generationTokensTotal).toBe(0);
    const s = pd.stats();
    expect([s.promptTokensTotal, s.generationTokensTotal, s.requestsFinishedTotal, s.running, s.waiting]).toEqual([4000, 32, 4, 0, 0]);
  });

  it('a slower link lengthens TTFT by exactly the computed transfer time; an fp8 KV cache moves half the bytes', async () => {
    const workload = await createWorkload({ kind: 'synthetic', prompt: { kind: 'fixed', value: 2048 }, output: { kind: 'fixed', value: 8 } }, { tokenizer: await loadApproxTokenizer(), seed: 5 });
    const deployment = { engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'H100', gpus: 1 };
    const row = { kind: 'closed', concurrency: 1, label: 'one at a time', limits: { maxRequests: 4 }, workload } as const;
    const nvlink = createVirtualStageRunner(deployment, { pd: { prefill: 1, decode: 1 } });
    const pcie = createVirtualStageRunner(deployment, { pd: { prefill: 1, decode: 1, link: LINK_PRIORS.pcie } });
    const [a, b] = [await nvlink.runStage(row, 0, 1), await pcie.runStage(row, 0, 1)];
    const extra = kvTransferMs(pcie.pdLink as NonNullable<typeof pcie.pdLink>, 2048) - kvTransferMs(nvlink.pdLink as NonNullable<typeof nvlink.pdLink>, 2048);
    expect(nvlink.pdLink?.kind).toBe('nvlink');
    expect(extra).toBeGreaterThan(5); // 2048 × 128 KiB at 20 GB/s ≈ 13.4 ms against ≈ 1.2 ms over NVLink
    expect(a.records).toHaveLength(4);
    for (let i = 0; i < 4; i++) expect((b.records[i]?.ttftMs as number) - (a.records[i]?.ttftMs as number)).toBeCloseTo(extra, 6);
    const r = resolveSimEngine(deployment);
    const fp8 = resolveSimEngine({ ...deployment, kvCacheDtype: 'fp8' });
    expect(kvTransferLink(fp8, { prefill: 1, decode: 1 }).bytesPerTokenPerGpu * 2).toBe(kvTransferLink(r, { prefill: 1, decode: 1 }).bytesPerTokenPerGpu);
  });

  it('reads P:D as whole numbers from 1 up, one line otherwise', () => {
    expect(parsePdSplit('1:3')).toEqual({ prefill: 1, decode: 3 });
    for (const bad of ['0:1', '1:0', '2', 'a:b', '1.5:2', '40:40']) expect(() => parsePdSplit(bad)).toThrow(/^--pd /);
  });
});

describe('inferbench sim --pd 1:1 over HTTP', () => {
  let sim: SimServer;
  let tmp: string;
  const ROW = ['--profile', 'constant', '--rate', '6', '--max-requests', '24', '--prompt-tokens', '1024', '--output-tokens', '16'];
  beforeAll(async () => {
    sim = await startSimServer({ ...ENGINE, seed: 3, pd: { prefill: 1, decode: 1 } });
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-pd-'));
  });
  afterAll(async () => {
    await sim.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('TTFT is never below the prefill plus the transfer; predict --pd 1:1 agrees with it', async () => {
    const out = join(tmp, 'run');
    const res = await runCli(['run', '--target', sim.url, '--replica-header', 'x-sim-replica', ...ROW, '--tokenizer', 'approx', '--no-progress', '--idle-wait', '0', '--out', out], { timeoutMs: 120_000 });
    expect(res.code, res.stderr).toBe(0);
    const { doc, records } = readRunFolder(out);
    const truth = new Map(sim.truth.finished().map((t): [string, TruthRecord] => [String(t.id), t]));
    const link = sim.pdLink as NonNullable<typeof sim.pdLink>;
    const ok = records.filter((r) => r.status === 'ok');
    expect(ok.length).toBeGreaterThanOrEqual(24);
    for (const r of ok) {
      const t = truth.get(r.serverRequestId as string) as TruthRecord;
      expect(t, `truth of request ${r.serverRequestId}`).toBeDefined();
      const [start, end, moved] = [t.prefillStartMs as number, t.prefillEndMs as number, t.transferEndMs as number];
      expect([t.prefillReplica, t.decodeReplica, r.replica]).toEqual([0, 0, 0]);
      // The sim's truth: the transfer takes at least the link's time for this prompt, and the first token comes after it.
      expect(moved - end).toBeGreaterThanOrEqual(kvTransferMs(link, t.promptTokens) - 1e-9);
      expect(t.plannedMs[0] as number).toBeGreaterThan(moved);
      // Measured over HTTP: TTFT covers this request's prefill and transfer as the sim timed them, and the model's own
      // cost of that prefill alone in a step plus the computed transfer.
      const ttft = r.ttftMs as number;
      expect(ttft).toBeGreaterThanOrEqual(moved - start);
      const cached = t.cachedTokens ?? 0;
      expect(ttft).toBeGreaterThanOrEqual(prefillAloneMs(t.promptTokens - cached, cached) + kvTransferMs(link, t.promptTokens));
    }
    // The front's /metrics reads as one server's: every request finished once (on its decode engine), each prompt counted once.
    const metrics = await (await fetch(`${sim.url}/metrics`)).text();
    const counter = (name: string): number => Number(new RegExp(`^vllm:${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
    const all = [...truth.values()];
    expect(counter('request_success_total')).toBe(all.filter((t) => t.outcome === 'completed').length);
    expect(counter('prompt_tokens_total')).toBe(all.filter((t) => t.prefillStartMs !== null).reduce((a, t) => a + t.promptTokens, 0));
    const predicted = await runCli(['predict', ...Object.entries(ENGINE).flatMap(([k, v]) => [`--${k}`, String(v)]), '--pd', '1:1', ...ROW, '--json']);
    expect(predicted.code, predicted.stderr).toBe(0);
    expect(predicted.stderr).toMatch(/prefill\/decode disaggregation: 1 prefill \+ 1 decode engines of 1 GPU each; KV moves over nvlink/);
    const v = (JSON.parse(predicted.stdout) as RunSummaryDoc).stages[0];
    const h = doc.stages[0];
    const rel = (a: number | undefined, b: number | undefined): number => Math.abs((a as number) / (b as number) - 1);
    // Medians: a TTFT of ≈ 85 ms is short enough for a busy machine's few late writes (+80 ms) to move its mean by 30%.
    const figures = { ttftMedian: [v?.metrics.ttftMs?.median, h?.metrics.ttftMs?.median], itlMedian: [v?.metrics.itlMs?.median, h?.metrics.itlMs?.median], requestThroughput: [v?.requestThroughput, h?.requestThroughput] } as const;
    const tol = { ttftMedian: 0.3, itlMedian: 0.1, requestThroughput: 0.15 } as const;
    for (const [k, [p, m]] of Object.entries(figures)) expect(rel(p, m), `${k}: predicted ${p}, measured ${m}`).toBeLessThan(tol[k as keyof typeof tol]);
  });

  it('usage errors exit 2 with one line', async () => {
    const cases: [string[], RegExp][] = [
      [['sim', '--pd', '1:1', '--replicas', '2'], /^--pd P:D routes requests itself \(least load in each pool\); give it without --replicas$/],
      [['predict', '--pd', '1:1', '--router', 'least-load'], /^--pd P:D routes requests itself \(least load in each pool\); give it without --router$/],
      [['predict', '--pd', '0:2'], /^--pd 0:2: give P:D, whole numbers of prefill and decode engines from 1 up \(e\.g\. --pd 1:3\)$/],
      [['sim', '--pd', 'two'], /^--pd two: give P:D/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    results.forEach((r, i) => {
      expect(r.code, r.stderr).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]?.replace(/^error: /, '')).toMatch((cases[i] as [string[], RegExp])[1]);
    });
  });
});
