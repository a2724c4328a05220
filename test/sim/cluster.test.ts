/**
 * `inferbench sim --replicas N --router P` (issue 34 items 2 and 3): four engines behind one port, measured over HTTP
 * with `run --replica-header x-sim-replica`. A shared-prefix workload with more prefix groups than a replica sees
 * twice under round-robin: prefix-aware routing sends each group to one replica, so it misses once per group where
 * round-robin misses once per group and replica. `predict --replicas 4 --router P` with the same workload (its
 * requests name their prefix group instead of carrying text) agrees with those HTTP runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { RunSummaryDoc } from '../../src/report/run-summary.js';
import type { SimClusterOptions } from '../../src/sim/cluster/cluster.js';
import { SimRouter, blockChain } from '../../src/sim/cluster/router.js';
import { runCliHere as runCli, startSimThread, type SimThread } from '../helpers/in-process-sim-cli.js';
import { readRunFolder } from '../helpers/run-folder.js';

// An L4: slow enough that the engines' own time, which predict models, dwarfs what a busy 2-core machine adds over HTTP.
const DEPLOYMENT = ['--engine', 'vllm', '--model', 'Qwen2-7B-Instruct', '--gpu', 'L4'];
const cluster = (router: 'round-robin' | 'prefix-aware'): { cluster: SimClusterOptions } =>
  ({ cluster: { engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'L4', gpus: 1, seed: 5, promptTokensDetails: true, port: 0, replicas: 4, router } });
/** The row of both: 48 requests, 4 at a time, of 2,100 tokens of which 2,048 are one of 16 shared prefixes. */
const ROW = ['--profile', 'concurrent', '--concurrency', '4', '--max-requests', '48', '--prompt-tokens', '2100', '--prefix-tokens', '2048', '--prefix-groups', '16', '--output-tokens', '8', '--seed', '42'];

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[s.length >> 1] as number) : ((s[(s.length >> 1) - 1] as number) + (s[s.length >> 1] as number)) / 2;
};

describe('SimRouter', () => {
  it('round-robin takes turns; least-load takes the idlest; prefix-aware follows the longest seen prefix', () => {
    const rr = new SimRouter(3, 'round-robin');
    expect([0, 1, 2, 3].map(() => rr.pick('x'))).toEqual([0, 1, 2, 0]);
    const ll = new SimRouter(3, 'least-load');
    ll.started(0);
    ll.started(1);
    expect(ll.pick(undefined)).toBe(2);
    const pa = new SimRouter(4, 'prefix-aware');
    const a = 'a'.repeat(1024);
    const b = 'b'.repeat(1024);
    const first = pa.pick(`${a}one`);
    pa.started(first);
    const other = pa.pick(`${b}two`);
    expect(other).not.toBe(first);
    expect(pa.pick(`${a}three`)).toBe(first);
    expect(blockChain('x'.repeat(600))).toHaveLength(2);
  });
});

/**
 * Both clusters serve from one worker thread (their own event loop, as a separate process would give them); `run` and
 * `predict` run in this process (main.ts's program: the CLI's flags, output and exit codes without a child's start-up).
 */
describe('inferbench sim --replicas 4 over HTTP', () => {
  let sims: SimThread;
  let tmp: string;
  beforeAll(async () => {
    sims = await startSimThread([cluster('prefix-aware'), cluster('round-robin')]);
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-cluster-'));
  });
  afterAll(async () => {
    await sims.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  const run = async (c: 0 | 1, name: string): Promise<{ doc: RunSummaryDoc; records: RequestRecord[]; stdout: string; routed: number[] }> => {
    const out = join(tmp, name);
    const res = await runCli(['run', '--target', sims.urls[c] as string, '--replica-header', 'x-sim-replica', ...ROW, '--tokenizer', 'approx', '--no-progress', '--idle-wait', '0', '--out', out]);
    expect(res.code, res.stderr).toBe(0);
    return { ...readRunFolder(out), stdout: res.stdout, routed: (await sims.routed())[c] as number[] };
  };
  const measured: Partial<Record<'prefix-aware' | 'round-robin', RunSummaryDoc>> = {};

  it('prefix-aware routing has a higher cache hit rate and a lower TTFT than round-robin; per-replica figures come from the header', async () => {
    const pa = await run(0, 'prefix-aware');
    const robin = await run(1, 'round-robin');
    measured['prefix-aware'] = pa.doc;
    measured['round-robin'] = robin.doc;
    for (const r of [pa, robin]) {
      // Every answered request names its replica (a cool-down request cut before its headers cannot), and no replica served more than the router sent it.
      const answered = r.records.filter((x) => x.headersAtMs !== undefined);
      expect(answered.length).toBeGreaterThanOrEqual(48);
      expect(answered.every((x) => x.replica !== undefined && x.replica >= 0 && x.replica < 4)).toBe(true);
      const routed = r.routed;
      for (let i = 0; i < 4; i++) expect(r.records.filter((x) => x.replica === i).length).toBeLessThanOrEqual(routed[i] as number);
      const row = r.doc.stages[0];
      expect(row?.replicas?.map((x) => x.index)).toEqual([0, 1, 2, 3]);
      for (const rep of row?.replicas ?? []) expect(rep.sent).toBe(r.records.filter((x) => x.replica === rep.index && !x.warmup).length);
      expect(r.stdout).toMatch(/replica 3: \d+\/\d+ ok, TTFT p50/);
    }
    const hitPa = pa.doc.stages[0]?.prefixCacheHitRate as number;
    const hitRr = robin.doc.stages[0]?.prefixCacheHitRate as number;
    expect(hitPa).toBeGreaterThan(hitRr + 0.1);
    const ttft = (r: typeof pa): number => median(r.records.filter((x) => !x.warmup && x.status === 'ok').map((x) => x.ttftMs as number));
    expect(ttft(pa)).toBeLessThan(ttft(robin));
  });

  // The prefix cache's hits follow from which requests meet on a replica: round-robin's split is fixed, so its hit
  // rate is exactly the sim's; prefix-aware's picks of a new group follow the replicas' load, which real time moves a
  // little. Timing figures leave room for a busy 2-core machine (the HTTP row's own overheads), not for a model error.
  it.each(['round-robin', 'prefix-aware'] as const)('predict --replicas 4 --router %s agrees with the sim over HTTP', async (router) => {
    const http = measured[router]?.stages[0];
    expect(http, 'the HTTP runs above').toBeDefined();
    const res = await runCli(['predict', ...DEPLOYMENT, '--replicas', '4', '--router', router, ...ROW, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const v = (JSON.parse(res.stdout) as RunSummaryDoc).stages[0];
    const h = http as NonNullable<typeof http>;
    expect(v?.prefixCacheSource).toBe('usage');
    const hit = (s: typeof v): number => s?.prefixCacheHitRate as number;
    if (router === 'round-robin') {
      expect(v?.replicas?.map((r) => r.sent)).toEqual([12, 12, 12, 12]);
      // The same requests meet on each replica; the prompts' token counts differ by a seam token or so (approx vs the sim's count).
      expect(Math.abs(hit(v) - hit(h)), `hit rate predicted ${hit(v)} measured ${hit(h)}`).toBeLessThan(0.01);
    } else expect(Math.abs(hit(v) - hit(h)), `hit rate predicted ${hit(v)} measured ${hit(h)}`).toBeLessThan(0.08);
    const rel = (a: number | undefined, b: number | undefined): number => Math.abs((a as number) / (b as number) - 1);
    const figures = { ttftMean: [v?.metrics.ttftMs?.mean, h.metrics.ttftMs?.mean], itlMean: [v?.metrics.itlMs?.mean, h.metrics.itlMs?.mean], requestThroughput: [v?.requestThroughput, h.requestThroughput] } as const;
    const tol = { ttftMean: 0.3, itlMean: 0.1, requestThroughput: 0.15 } as const;
    for (const [k, [p, m]] of Object.entries(figures)) expect(rel(p, m), `${router} ${k}: predicted ${p}, measured ${m}`).toBeLessThan(tol[k as keyof typeof tol]);
  });
});

describe('predict --replicas N --router P (virtual time)', () => {
  it('four round-robin replicas carry a rate one engine cannot, each getting a quarter of the requests', async () => {
    const args = ['--profile', 'constant', '--rate', '20', '--max-requests', '200', '--prompt-tokens', '1024', '--output-tokens', '128', '--json'];
    const four = await runCli(['predict', '--replicas', '4', '--router', 'round-robin', ...args]);
    expect(four.code, four.stderr).toBe(0);
    const row = (JSON.parse(four.stdout) as RunSummaryDoc).stages[0];
    expect(row?.belowTarget).toBe(false);
    expect(row?.replicas?.map((r) => r.sent)).toEqual([50, 50, 50, 50]);
    const one = await runCli(['predict', ...args]);
    expect((JSON.parse(one.stdout) as RunSummaryDoc).stages[0]?.belowTarget).toBe(true);
    const bad = await runCli(['predict', '--router', 'least-load', ...args]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--router picks among several engines; give --replicas N too/);
  });
});
