import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-plan-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const small = ['--model', 'Qwen2-7B-Instruct', '--slo', 'ttft:1000,itl:50', '--gpu', 'L40S,H100', '--tp', '1,2', '--quant', 'fp16,awq', '--engine', 'vllm,lmdeploy', '--max-seconds', '3'];

function expectOneLineError(stderr: string, pattern: RegExp): void {
  const lines = stderr.split('\n').filter((l) => l.startsWith('error:'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('inferbench plan (CLI)', () => {
  it('prints the ranked candidates as JSON, searched on a worker thread too, and writes the chart and page', async () => {
    const out = join(tmp, 'plan');
    const r = await runCli(['plan', ...small, '--rate', '8', '--gpu-hour-price', 'L40S=1.1', '--exhaustive', '--threads', '2', '--json', '--out', out, '--format', 'json,svg,html']);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as {
      candidates: Array<{ gpu: string; feasible: boolean; rank?: number; costPerHour: number | null; gpuHourPrice: number }>;
      counts: { total: number; searched: number };
      threads: number;
      verification: { point: { meetsSlo: boolean } };
      prices: { perGpuHour: Record<string, number> };
      notes: string[];
    };
    expect(plan.threads).toBe(2);
    expect(plan.counts.total).toBe(2 * 2 * 2 * 2);
    expect(plan.counts.searched).toBe(16);
    expect(plan.candidates[0]?.rank).toBe(1);
    expect(plan.verification.point.meetsSlo).toBe(true);
    expect(plan.prices.perGpuHour).toEqual({ L40S: 1.1, H100: 2.49 });
    expect(plan.notes.join('\n')).toMatch(/assumed on-demand prices per GPU-hour as of \S+ .*H100 \$2\.49/);
    expect(r.stderr).toMatch(/evaluated 16 candidates in [\d.]+ s on 2 threads/);
    for (const f of ['plan.json', 'pareto.svg', 'plan.html']) expect(existsSync(join(out, f))).toBe(true);
    expect(readFileSync(join(out, 'pareto.svg'), 'utf8')).toMatch(/tokens\/s per GPU/);
    expect(readFileSync(join(out, 'plan.html'), 'utf8')).toMatch(/<pre>plan: Qwen2-7B-Instruct at 8\.00 req\/s/);
  });

  it('plans on calibrated constants with --calibration and says so, in the repeat command too', async () => {
    // Half the L40S's bandwidth and compute efficiency of the built-in constants: a slower L40S.
    const file = join(tmp, 'slow-l40s.json');
    writeFileSync(file, JSON.stringify({ note: 'test', hardware: { L40S: { etaM: 0.4, etaC: 0.3, linkAlphaUs: 20, linkBetaGBs: 20 } } }));
    const one = ['--model', 'Qwen2-7B-Instruct', '--slo', 'ttft:1000,itl:50', '--gpu', 'L40S', '--tp', '1', '--quant', 'awq', '--engine', 'vllm', '--max-seconds', '3', '--rate', '4', '--threads', '1', '--json'];
    const capacity = (stdout: string): number => (JSON.parse(stdout) as { candidates: Array<{ capacityPerReplica: number }> }).candidates[0]?.capacityPerReplica as number;
    const [plain, slow] = await Promise.all([runCli(['plan', ...one]), runCli(['plan', ...one, '--calibration', file])]);
    expect([plain.code, slow.code]).toEqual([0, 0]);
    expect(capacity(slow.stdout)).toBeLessThan(0.8 * capacity(plain.stdout));
    const doc = JSON.parse(slow.stdout) as { notes: string[]; verification: { command: string } };
    expect(doc.notes.join('\n')).toMatch(/simulator constants from .*slow-l40s\.json/);
    expect(doc.verification.command).toMatch(/ --calibration \S*slow-l40s\.json$/);
  });

  const usage: Array<[string, string[], RegExp]> = [
    ['no load', small, /plan needs the load to serve: --rate R .* or --output-tokens-per-s T/],
    ['two loads', [...small, '--rate', '2', '--output-tokens-per-s', '100'], /--rate and --output-tokens-per-s both set the load; give one of them/],
    ['no SLO', ['--model', 'Qwen2-7B-Instruct', '--rate', '2'], /plan searches against an SLO: add --slo/],
    ['unknown model', ['--model', 'Nope-7B', '--rate', '2', '--slo', 'ttft:500'], /unknown model "Nope-7B"/],
    ['unknown GPU in the price list', [...small, '--rate', '2', '--gpu-hour-price', 'B300=5'], /--gpu-hour-price: unknown GPU "B300"/],
    ['no model', ['--rate', '2', '--slo', 'ttft:500'], /plan needs --model/],
    ['saving what was not fitted', [...small, '--rate', '2', '--save-calibration', join(tmp, 'x.json')], /--save-calibration writes what --calibrate-from RUN fitted/],
  ];
  for (const [name, args, pattern] of usage) {
    it(`${name}: one line, exit 2`, async () => {
      const r = await runCli(['plan', ...args]);
      expect(r.code).toBe(2);
      expectOneLineError(r.stderr, pattern);
      expect(r.stdout).toBe('');
    });
  }
});
