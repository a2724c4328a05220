/**
 * Energy with several replicas, in process over real HTTP: `--power auto` with several --target URLs reads every
 * replica's /metrics and adds their joules (each replica's part beside), a replica without power leaves the row
 * without J/token and says why, `auto` finding nothing says so in one line and records it, and `inferbench sim
 * --replicas N` lists every replica's GPUs on its one /metrics.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { startPowerSampler, type StartedPower } from '../../src/cli/run-power.js';
import { PowerSampler } from '../../src/power/sampler.js';
import { stageSummarySchema, type StageSummary } from '../../src/results/stage.js';
import { startSimCluster, type SimCluster } from '../../src/sim/cluster/cluster.js';
import { startFixedDelayServer } from '../helpers/openai-server.js';
import { sleep, startDcgmExporter } from './exporters.js';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** A row over [fromMs, toMs]: 1,000 output tokens in its window, 600 of them from replica 0 and 400 from replica 1. */
function row(fromMs: number, toMs: number): StageSummary {
  const s = (toMs - fromMs) / 1000;
  const replica = (index: number, tokens: number) => ({ index, sent: 10, ok: 10, errors: 0, incomplete: 0, outputTokenThroughput: tokens / s });
  return stageSummarySchema.parse({
    index: 0, label: 'concurrent@8', kind: 'closed', durationS: s,
    window: { rule: 'steady', startS: 0, lengthS: s, fromMs, toMs },
    requests: { total: 20, ok: 20 },
    requestThroughput: 20 / s, outputTokenThroughput: 1000 / s, totalTokenThroughput: 3000 / s,
    replicas: [replica(0, 600), replica(1, 400)],
  });
}

/** A DCGM-style page at `URL/metrics` (the exporter answers any path), so `auto` finds it on a "replica". */
async function replicaWithPower(gpus: number, watts: number): Promise<string> {
  const e = await startDcgmExporter({ gpus, watts: () => watts });
  closers.push(() => e.close());
  return e.url.replace(/\/metrics$/, '');
}

async function started(urls: string[], lines: string[]): Promise<StartedPower> {
  const p = await startPowerSampler({}, urls[0] as string, (l) => lines.push(l), urls);
  closers.push(() => p.reader?.stop());
  return p;
}

describe('--power auto with several targets', () => {
  it("adds every replica's joules and divides by every replica's tokens; each replica's part beside", async () => {
    // Replica 0: one GPU at 300 W; replica 1: two GPUs at 200 W each. The deployment draws 700 W.
    const urls = [await replicaWithPower(1, 300), await replicaWithPower(2, 200)];
    const lines: string[] = [];
    const t0 = performance.now();
    const p = await started(urls, lines);
    await sleep(1500);
    const e = p.reader?.energyOf(row(t0 + 200, t0 + 1200));
    expect(e?.valid).toBe(true);
    // Only the first target's power (the old reading) would be 300 J and 0.3 J/token: less than half the truth.
    expect(e?.joules).toBeCloseTo(700, 0);
    expect(e?.avgWatts).toBeCloseTo(700, 0);
    expect(e?.joulesPerOutputToken).toBeCloseTo(0.7, 3);
    expect(e?.gpus).toEqual([0, 1, 2]);
    expect(e?.source).toBe(`dcgm:${urls[0]}/metrics + dcgm:${urls[1]}/metrics`);
    expect(e?.replicas?.map((r) => [r.index, r.gpus, Math.round(r.joules ?? 0), Number(r.joulesPerOutputToken?.toFixed(3))])).toEqual([
      [0, [0], 300, 0.5], // 300 J over its own 600 tokens
      [1, [0, 1], 400, 1], // 400 J over its own 400 tokens
    ]);
    expect(lines.join('\n')).toMatch(/^power: reading each replica's own GPUs every 100 ms — replica 0 dcgm:.*\(GPU 0\), replica 1 dcgm:.*\(GPU 0, 1\)/);
    expect(p.record).toEqual({
      requested: 'auto', found: `dcgm:${urls[0]}/metrics + dcgm:${urls[1]}/metrics`,
      replicas: [{ index: 0, url: urls[0], source: `dcgm:${urls[0]}/metrics` }, { index: 1, url: urls[1], source: `dcgm:${urls[1]}/metrics` }],
    });
  });

  it('a replica without power: no J/token on any row, and one line says which replica and why', async () => {
    const plain = await startFixedDelayServer({ ttftMs: 1, itlMs: 1 }); // no /metrics at all
    closers.push(() => plain.close());
    const urls = [await replicaWithPower(1, 300), plain.url];
    const lines: string[] = [];
    const t0 = performance.now();
    const p = await started(urls, lines);
    await sleep(1300);
    const e = p.reader?.energyOf(row(t0 + 200, t0 + 1100));
    expect(e?.valid).toBe(false);
    expect(e?.joulesPerOutputToken).toBeUndefined();
    expect(e?.reason).toContain(`replica 1 (${plain.url}) has no power readings`);
    expect(e?.replicas?.[1]).toMatchObject({ index: 1, source: 'none', valid: false });
    expect(lines.filter((l) => l.includes('no row gets a J/token'))).toEqual([`power: replica 1 (${plain.url}) has no DCGM power on its /metrics: its GPUs cannot be counted, so no row gets a J/token`]);
    expect(p.record.reason).toContain('replica 1');
  });
});

describe('--power auto that finds nothing', () => {
  it('says so in one line and records requested auto, found null and why', async () => {
    const plain = await startFixedDelayServer({ ttftMs: 1, itlMs: 1 });
    closers.push(() => plain.close());
    const lines: string[] = [];
    const p = await startPowerSampler({}, plain.url, (l) => lines.push(l));
    expect(p.reader).toBeUndefined();
    expect(lines).toEqual([`power: --power auto found no GPU power source: ${plain.url}/metrics has no DCGM power readings (DCGM_FI_DEV_POWER_USAGE); no J/token or Avg W — name one with --power dcgm:URL | nvidia-smi | trtllm:URL | cmd:COMMAND`]);
    expect(p.record).toEqual({ requested: 'auto', found: null, reason: `${plain.url}/metrics has no DCGM power readings (DCGM_FI_DEV_POWER_USAGE)` });
    // --power none: asked for nothing, nothing said.
    const none = await startPowerSampler({ power: { kind: 'none' } }, plain.url, (l) => lines.push(l));
    expect(none.record).toEqual({ requested: 'none', found: null });
    expect(lines).toHaveLength(1);
  });
});

describe('inferbench sim --replicas N', () => {
  let cluster: SimCluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  it("serves every replica's GPUs on its one /metrics, each under its own number, and auto finds them", async () => {
    cluster = await startSimCluster({ engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'H100', gpus: 1, replicas: 2, router: 'round-robin' });
    const text = await (await fetch(`${cluster.url}/metrics`)).text();
    expect(text).toMatch(/^DCGM_FI_DEV_POWER_USAGE\{gpu="0",.*modelName="NVIDIA H100".*\} 70$/m);
    expect(text).toMatch(/^DCGM_FI_DEV_POWER_USAGE\{gpu="1",.*\} 70$/m);
    const sampler = new PowerSampler({ kind: 'auto' }, { targetUrl: cluster.url });
    closers.push(() => sampler.stop());
    expect((await sampler.start()).ok).toBe(true);
    expect(sampler.gpusSeen()).toEqual([0, 1]);
    // Idle H100s: each replica's GPU reads its own idle 70 W (a sum of the two under one label would read 140).
    await sleep(300);
    const watts = sampler.series().map((x) => [x.gpu, x.watts]);
    expect(new Set(watts.map(([g]) => g))).toEqual(new Set([0, 1]));
    expect(watts.every(([, w]) => w === 70)).toBe(true);
  });
});
