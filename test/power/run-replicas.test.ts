/**
 * `run` end to end: with two --target URLs (two simulators, one H100 each) J/token counts both replicas' GPUs — the
 * sum of the two simulators' own energy ledgers over the row's window — with each replica's part on its line; and
 * `--power auto` against a server without GPU power says so and records it in summary.json and manifest.json.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Energy, RunPower } from '../../src/results/energy.js';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';
import { runCli } from '../helpers/cli.js';
import { startFixedDelayServer, type FixedDelayServer } from '../helpers/openai-server.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-replica-energy-'));
let sims: SimServer[] = [];
let plain: FixedDelayServer;
beforeAll(async () => {
  sims = await Promise.all([1, 2].map((seed) => startSimServer({ engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'H100', gpus: 1, seed })));
  plain = await startFixedDelayServer({ ttftMs: 2, itlMs: 1 });
});
afterAll(async () => {
  await Promise.all([...sims.map((s) => s.close()), plain.close()]);
  rmSync(tmp, { recursive: true, force: true });
});

interface Doc {
  power?: RunPower;
  stages: Array<{ energy?: Energy; window: { fromMs: number; toMs: number }; outputTokenThroughput: number; durationS: number }>;
}
const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

describe('energy of a run over several targets', () => {
  it("run --target A,B: the joules are both replicas' (their ledgers' sum), J/token over both replicas' tokens", async () => {
    const out = join(tmp, 'two');
    const [a, b] = sims as [SimServer, SimServer];
    const r = await runCli(['run', '--target', `${a.url},${b.url}`, '--profile', 'concurrent', '--concurrency', '4', '--max-requests', '40',
      '--prompt-tokens', '128', '--output-tokens', '48', '--no-progress', '--out', out], { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`power: reading each replica's own GPUs every 100 ms — replica 0 dcgm:${a.url}/metrics (GPU 0), replica 1 dcgm:${b.url}/metrics (GPU 0)`);
    const doc = readJson<Doc>(join(out, 'summary.json'));
    const row = doc.stages[0];
    const e = row?.energy;
    expect(e?.valid).toBe(true);
    expect(e?.gpus).toEqual([0, 1]);
    expect(e?.replicas?.map((x) => x.source)).toEqual([`dcgm:${a.url}/metrics`, `dcgm:${b.url}/metrics`]);
    // The truth: each simulator's own ledger over the row's window (wall clock through power.jsonl's mapping).
    const first = JSON.parse(readFileSync(join(out, 'power.jsonl'), 'utf8').split('\n')[0] as string) as { t: number; epochMs: number; replica: number };
    expect(first.replica).toBeTypeOf('number');
    const offset = first.epochMs - first.t;
    const w = row?.window as { fromMs: number; toMs: number };
    const ledger = async (s: SimServer): Promise<number> => ((await (await fetch(`${s.url}/sim/v1/energy?from=${w.fromMs + offset}&to=${w.toMs + offset}`)).json()) as { joules: number }).joules;
    const truth = (await ledger(a)) + (await ledger(b));
    // Within 5% (readings are stamped at their GET's midpoint, a few-second window on a busy host); one replica's
    // power alone would be about half.
    expect(Math.abs((e?.joules ?? 0) - truth) / truth).toBeLessThan(0.05);
    const tokens = (row?.outputTokenThroughput ?? 0) * (row?.durationS ?? 0);
    expect(Math.abs((e?.joulesPerOutputToken ?? 0) - truth / tokens) / (truth / tokens)).toBeLessThan(0.05);
    // Each replica's part sums to the row's, and its line under the table shows it.
    expect((e?.replicas ?? []).reduce((x, p) => x + (p.joules ?? 0), 0)).toBeCloseTo(e?.joules ?? 0, 6);
    expect(r.stdout).toMatch(/replica 0 http:\/\/127\.0\.0\.1:\d+: .*, GPU \d+ W, \d\.\d{3} J\/token/);
    expect(r.stdout).toMatch(/replica 1 http:\/\/127\.0\.0\.1:\d+: .*, GPU \d+ W, \d\.\d{3} J\/token/);
    expect(doc.power).toMatchObject({ requested: 'auto', found: `dcgm:${a.url}/metrics + dcgm:${b.url}/metrics` });
    expect(readJson<{ power?: RunPower }>(join(out, 'manifest.json')).power).toEqual(doc.power);
  });

  it('--power auto without a source: one line, and power.found null in summary.json and manifest.json', async () => {
    const out = join(tmp, 'plain');
    const r = await runCli(['run', '--target', plain.url, '--profile', 'concurrent', '--concurrency', '1', '--max-requests', '3',
      '--prompt-tokens', '16', '--output-tokens', '4', '--no-progress', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('power:'))).toEqual([
      `power: --power auto found no GPU power source: ${plain.url}/metrics has no DCGM power readings (DCGM_FI_DEV_POWER_USAGE); no J/token or Avg W — name one with --power dcgm:URL | nvidia-smi | trtllm:URL | cmd:COMMAND`,
    ]);
    const power = { requested: 'auto', found: null, reason: `${plain.url}/metrics has no DCGM power readings (DCGM_FI_DEV_POWER_USAGE)` };
    expect(readJson<Doc>(join(out, 'summary.json')).power).toEqual(power);
    expect(readJson<{ power?: RunPower }>(join(out, 'manifest.json')).power).toEqual(power);
  });
});
