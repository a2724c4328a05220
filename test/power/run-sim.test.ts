/**
 * End to end: `run --power auto` against `inferbench sim` reads the simulator's DCGM metrics from its /metrics and
 * gives each row the J/token the simulator's own energy ledger (/sim/v1/energy) says for the same window, within 2%;
 * `predict` and `plan` print J/token from the same power model.
 * Every command runs in this process, through the CLI's own main (helpers/cli-in-process-capgate.ts): what is tested
 * is what the commands print and write, not the process.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';
import { cliInProcess } from '../helpers/cli-in-process-capgate.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-energy-'));
let sim: SimServer;
beforeAll(async () => {
  sim = await startSimServer({ engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'H100', gpus: 2, seed: 5 });
});
afterAll(async () => {
  await sim.close();
  rmSync(tmp, { recursive: true, force: true });
});

interface Energy { joules: number; avgWatts: number; joulesPerOutputToken?: number; gpus: number[]; source: string; coverage: number; valid: boolean }

describe('energy against the simulator', () => {
  it('the sim serves DCGM power and energy per GPU on /metrics', async () => {
    const text = await (await fetch(`${sim.url}/metrics`)).text();
    expect(text).toMatch(/^DCGM_FI_DEV_POWER_USAGE\{gpu="0",.*\} \d/m);
    expect(text).toMatch(/^DCGM_FI_DEV_POWER_USAGE\{gpu="1",.*\} \d/m);
    expect(text).toMatch(/^# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter$/m);
    expect(text).toMatch(/^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{gpu="1",.*\} \d+\.0$/m);
  });

  it('run --power auto: J/token equals the sim ledger over the row window within 2%', async () => {
    const out = join(tmp, 'run');
    const r = await cliInProcess(['run', '--target', sim.url, '--profile', 'constant', '--rate', '6', '--max-seconds', '6', '--prompt-tokens', '256', '--output-tokens', '96', '--out', out, '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/power: reading dcgm:http:\/\/127\.0\.0\.1:\d+\/metrics every 100 ms \(GPU 0, 1\)/);
    const doc = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { stages: Array<{ energy?: Energy; window: { fromMs: number; toMs: number }; outputTokenThroughput: number; durationS: number }> };
    const row = doc.stages[0];
    const e = row?.energy;
    expect(e?.valid).toBe(true);
    expect(e?.gpus).toEqual([0, 1]);
    expect(e?.coverage).toBeCloseTo(1, 6); // a sum of sample intervals over the window length: 1 up to rounding
    // power.jsonl maps the run's clock to the wall clock, which the sim's ledger is queried on.
    const first = JSON.parse(readFileSync(join(out, 'power.jsonl'), 'utf8').split('\n')[0] as string) as { t: number; epochMs: number };
    const offset = first.epochMs - first.t;
    const w = row?.window as { fromMs: number; toMs: number };
    const ledger = (await (await fetch(`${sim.url}/sim/v1/energy?from=${w.fromMs + offset}&to=${w.toMs + offset}`)).json()) as { joules: number; gpus: number };
    expect(ledger.gpus).toBe(2);
    const tokens = (row?.outputTokenThroughput ?? 0) * (row?.durationS ?? 0);
    const ledgerPerToken = ledger.joules / tokens;
    expect(Math.abs((e?.joulesPerOutputToken ?? 0) - ledgerPerToken) / ledgerPerToken).toBeLessThan(0.02);
    // Two H100s at this light load draw between their idle (2 × 70 W) and their maximum (2 × 700 W).
    expect(e?.avgWatts).toBeGreaterThan(140);
    expect(e?.avgWatts).toBeLessThan(1400);
    // The HTML report charts the power beside the server's gauges; the table has the energy columns.
    const rep = join(tmp, 'report');
    const html = await cliInProcess(['report', out, '--format', 'html,md', '--out', rep]);
    expect(html.code, html.stderr).toBe(0);
    expect(readFileSync(join(rep, 'report.html'), 'utf8')).toContain('GPU power');
    expect(readFileSync(join(out, "table.md"), "utf8")).toMatch(/\|\s*J\/token\s*\|\s*Avg W\s*\|/);
  });

  it('run --power none: no energy', async () => {
    const out = join(tmp, 'none');
    const r = await cliInProcess(['run', '--target', sim.url, '--profile', 'constant', '--rate', '4', '--max-requests', '6', '--output-tokens', '16', '--power', 'none', '--out', out, '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { stages: Array<{ energy?: Energy }> };
    expect(doc.stages[0]?.energy).toBeUndefined();
  });

  it('a bad --power is one line, exit 2', async () => {
    const r = await cliInProcess(['run', '--target', sim.url, '--power', 'dcgm:nowhere', '--max-requests', '2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--power dcgm:URL needs an http\(s\) URL/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('predict prints J/token and Avg W for every row, from the power model', async () => {
    const r = await cliInProcess(['predict', '--gpu', 'H100', '--model', 'Llama-3.1-8B', '--profile', 'concurrent', '--concurrency', '1,64', '--max-seconds', '20', '--prompt-tokens', '512', '--output-tokens', '256', '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { stages: Array<{ energy?: Energy }> };
    const [low, high] = doc.stages.map((s) => s.energy as Energy);
    expect(low?.source).toBe('simulator');
    expect(low?.valid).toBe(true);
    // Batching: more power, far less energy per token.
    expect(high?.avgWatts).toBeGreaterThan(low?.avgWatts ?? Infinity);
    expect(high?.joulesPerOutputToken).toBeLessThan((low?.joulesPerOutputToken ?? 0) / 4);
    const table = await cliInProcess(['predict', '--gpu', 'H100', '--model', 'Llama-3.1-8B', '--profile', 'concurrent', '--concurrency', '4', '--max-seconds', '10']);
    // The table keeps its width: a prediction's energy is the line under it (measured runs get the columns).
    expect(table.stdout).toMatch(/^- energy \(the simulator's power model, docs\/energy\.md\): concurrent@4 \d+\.\d{3} J\/token at \d+ W$/m);
  });

  it('compare shows J per 1M output tokens beside $ per 1M', async () => {
    const dirs = ['H100', 'L40S'].map((g) => join(tmp, `predict-${g}`));
    for (const [i, g] of ['H100', 'L40S'].entries()) {
      const r = await cliInProcess(['predict', '--gpu', g, '--model', 'Llama-3.1-8B', '--profile', 'concurrent', '--concurrency', '8', '--max-seconds', '10', '--out', dirs[i] as string]);
      expect(r.code).toBe(0);
    }
    const r = await cliInProcess(['compare', ...dirs, '--gpu-hour-price', 'H100=2.49,L40S=1.1', '--format', 'md', '--out', join(tmp, 'cmp')]);
    expect(r.code, r.stderr).toBe(0);
    const header = r.stdout.split('\n').find((l) => l.includes('$ per 1M output tokens')) ?? '';
    expect(header).toMatch(/\$ per 1M output tokens .*\| *J per 1M output tokens/);
    expect(r.stdout).toMatch(/\| +\d+\.\d{3} MJ \(\d+\.\d{3} kWh\) +\|/);
  });

  it('plan prints J/token per candidate and ranks by it with --objective energy', async () => {
    // --threads 1: two candidates need no worker threads (each would load the simulator again); the plan is the same.
    const args = ['plan', '--model', 'Llama-3.1-8B', '--slo', 'ttft:2000,itl:100', '--gpu', 'L40S,H100', '--tp', '1', '--quant', 'fp16', '--engine', 'vllm', '--max-seconds', '3', '--rate', '4', '--threads', '1'];
    const cost = await cliInProcess([...args, '--exhaustive', '--json']);
    expect(cost.code).toBe(0);
    const plan = JSON.parse(cost.stdout) as { objective: string; candidates: Array<{ gpu: string; feasible: boolean; joulesPerOutputToken: number | null }> };
    expect(plan.objective).toBe('cost');
    const feasible = plan.candidates.filter((c) => c.feasible);
    expect(feasible.length).toBe(2);
    for (const c of feasible) expect(c.joulesPerOutputToken).toBeGreaterThan(0);
    const energy = await cliInProcess([...args, '--objective', 'energy']);
    expect(energy.code).toBe(0);
    expect(energy.stdout).toMatch(/ranked by energy/);
    expect(energy.stdout).toMatch(/\$ per 1M output tokens \| J\/token \|/);
    const byEnergy = [...feasible].sort((a, b) => (a.joulesPerOutputToken ?? 0) - (b.joulesPerOutputToken ?? 0));
    const firstRow = energy.stdout.split('\n').find((l) => /^\|\s*1\s*\|/.test(l));
    expect(firstRow?.split('|').map((c) => c.trim())[2]).toBe(byEnergy[0]?.gpu);
  });
});
