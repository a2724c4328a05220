/**
 * Issue 51 item 5, plan --verify's side, in process: a candidate's run (`<verify>/<n>-<candidate>/run`) has a name
 * and id of its own, from the moment it is measured: verify.json, which marks the folder as one holding candidates'
 * runs, is written before the first launch (and after each candidate), not only at the end.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PlanCandidate, PlanResult } from '../../src/plan/types.js';
import { listRuns, openRunDir } from '../../src/store/run-store.js';
import type { MeasureCapacity } from '../../src/verify/types.js';
import { verifyPlan } from '../../src/verify/verify.js';
import { tinyCmd } from '../matrix/matrix-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'ib-verify-runs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function candidate(engine: string, rank: number): PlanCandidate {
  return {
    gpu: 'A100-80GB', gpus: 1, quant: 'fp16', engine, rank, feasible: true, status: 'feasible', reason: null, gpuHourPrice: 2,
    capacityPerReplica: 5, replicas: 1, totalGpus: 1, costPerHour: 2, costPerMillionOutputTokens: 1, tokensPerSecondPerGpu: 1, tokensPerSecondPerUser: 1, joulesPerOutputToken: null, launch: '',
  };
}

describe('plan --verify candidates as runs (issue 51 item 5)', () => {
  it('each candidate\'s run is named by its path from the plan\'s folder, with its own id, while it is measured and after', async () => {
    const results = join(root, 'inferbench-results');
    const dir = join(results, 'plan-out', 'verify');
    const seen: { name: string; id: string }[] = [];
    const measure: MeasureCapacity = async (args) => {
      const runDir = args[args.indexOf('--out') + 1] as string;
      mkdirSync(runDir, { recursive: true });
      const summary = { schemaVersion: 1, createdAt: new Date().toISOString(), layout: 'sweep', profile: 'capacity', context: { model: 'Qwen2-7B-Instruct', engine: 'vllm' }, stages: [] };
      writeFileSync(join(runDir, 'summary.json'), JSON.stringify(summary));
      expect(existsSync(join(dir, 'verify.json'))).toBe(true);
      const run = openRunDir(runDir);
      seen.push({ name: run.name, id: run.id });
      return { exitCode: 0, interrupted: false };
    };
    const plan = { model: 'Qwen2-7B-Instruct', rate: 4, candidates: [candidate('vllm', 1), candidate('sglang', 2)] } as unknown as PlanResult;
    const result = await verifyPlan(
      plan,
      { count: 2, server: { kind: 'template', template: tinyCmd() }, readyTimeoutMs: 10_000, stopTimeoutMs: 2_000, dir, runArgs: [], precisionPct: 10 },
      { measure, say: () => undefined, signal: new AbortController().signal },
    );
    expect(result.entries.map((e) => e.runDir !== null)).toEqual([true, true]);
    expect(seen.map((s) => s.name)).toEqual(['plan-out/verify/1-1x-A100-80GB-fp16-vllm/run', 'plan-out/verify/2-1x-A100-80GB-fp16-sglang/run']);
    expect(seen[0]?.id).not.toBe(seen[1]?.id);
    // The results folder lists both, with the ids they had while measured.
    expect(listRuns(results).map((r) => ({ name: r.name, id: r.id }))).toEqual(seen);
  }, 60_000);
});
