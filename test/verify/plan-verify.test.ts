import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { groupAlive } from '../../src/launch/process-group.js';
import { cliEntry, repoRoot } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/cli-in-process-matrix-verify.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-verify-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * A small, fast plan: two candidates (one GPU, vLLM and SGLang), no prefill/decode splits tried, short probes and a
 * coarse search step, so that each real-time capacity search against `inferbench sim` takes seconds: requests of 16
 * output tokens (a row's ramp-up and drain are a few request lifetimes), and an ITL limit (30 ms) that each search
 * runs into at loads the server still keeps up with, so no probe runs far past saturation (where a row takes many
 * seconds to stop, with hundreds of requests in flight). Unloaded, ITL is about 10 ms (vLLM) and 14 ms (SGLang): a
 * request's ITL (its 15 gaps' mean) would need a client stall of ~240 ms on its last token to miss the limit.
 *
 * The plan runs in this process (mainInProcess: the CLI's main with its parsing, its exit codes and its output
 * captured); the candidates' servers it launches are real `inferbench sim` processes. Only the Ctrl-C test, which is
 * about the process, spawns the CLI.
 */
const plan = [
  'plan', '--model', 'Qwen2-7B-Instruct', '--gpu', 'A100-80GB', '--tp', '1', '--quant', 'fp16', '--engine', 'vllm,sglang', '--pd', 'none',
  '--rate', '4', '--slo', 'ttft:1000,itl:30', '--prompt-tokens', '256', '--output-tokens', '16',
  '--max-seconds', '0.2', '--capacity-precision', '25', '--capacity-repeats', '1', '--threads', '1',
];

interface Entry {
  candidate: { engine: string; gpu: string; gpus: number; quant: string; planRank: number };
  measuredRank?: number;
  status: string;
  predictedCapacity: number;
  measuredCapacity: number | null;
  differencePct: number | null;
  precisionPct: number;
  withinPrecision: boolean | null;
  measuredCostPerHour?: number;
  runDir: string | null;
  serverLog: string;
  pid?: number;
  portFree?: boolean;
  error?: string;
  logTail?: string;
  command: string;
}
interface PlanDoc {
  candidates: Array<{ engine: string; capacityPerReplica: number | null; capacityFactor?: number; feasible: boolean; atLoad?: { ratePerReplica: number; meetsSlo: boolean } }>;
  verifications?: Entry[];
  notes: string[];
}

/**
 * A server's process group is gone when no live process is left in it (launch/'s check: a worker re-parented to a PID 1
 * that does not reap stays a zombie, which kill(-pgid, 0) would still find).
 */
function groupGone(pid: number): boolean {
  return !groupAlive(pid);
}

describe('plan --verify (issue 31 item 5)', () => {
  const calibration = join(tmp, 'measured.json');
  let measured: Entry[] = [];

  it('--verify 2 --server-cmd sim launches both candidates, measures each capacity into a run folder and stops every server', async () => {
    const out = join(tmp, 'plan');
    const r = await mainInProcess([...plan, '--verify', '2', '--server-cmd', 'sim', '--json', '--out', out, '--format', 'json,md', '--save-calibration', calibration]);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(r.stdout) as PlanDoc;
    const v = doc.verifications as Entry[];
    // issue 31's contract: `verification[]` holds the same entries (the predicted check moves to predictedCheck).
    expect((doc as unknown as { verification: unknown }).verification).toEqual(v);
    expect((doc as unknown as { predictedCheck: unknown }).predictedCheck).toBeDefined();
    expect(v).toHaveLength(2);
    expect(new Set(v.map((e) => e.candidate.engine))).toEqual(new Set(['vllm', 'sglang']));
    for (const e of v) {
      expect(e.status).toBe('ok');
      // Predicted: the plan's own capacity for that candidate.
      expect(e.predictedCapacity).toBe(doc.candidates.find((c) => c.engine === e.candidate.engine)?.capacityPerReplica);
      expect(e.measuredCapacity as number).toBeGreaterThan(0);
      expect(e.precisionPct).toBe(25);
      expect(e.differencePct).toBeCloseTo(((e.measuredCapacity as number) / e.predictedCapacity - 1) * 100, 9);
      expect(e.withinPrecision).toBe(Math.abs(e.differencePct as number) <= 25);
      // The run folder holds the measurement: its capacity answer is the one reported.
      const summary = JSON.parse(readFileSync(join(e.runDir as string, 'summary.json'), 'utf8')) as { capacity: { feasibleMax: number; precision: number } };
      expect(summary.capacity.feasibleMax).toBe(e.measuredCapacity);
      expect(summary.capacity.precision).toBe(0.25);
      expect(e.runDir?.startsWith(join(out, 'verify'))).toBe(true);
      expect(readFileSync(e.serverLog, "utf8")).toMatch(/inferbench sim: .* serving Qwen2-7B-Instruct \(fp16\) on 1× A100-80GB at http:\/\/127\.0\.0\.1:\d+/);
      expect(e.command).toMatch(new RegExp(` sim --engine ${e.candidate.engine} --model Qwen2-7B-Instruct --gpu A100-80GB --gpus 1 --quant fp16 .*--port \\d+$`));
      // Nothing left behind: the server's process group is gone and its port free.
      expect(groupGone(e.pid as number)).toBe(true);
      expect(e.portFree).toBe(true);
    }
    // Re-ranked by what was measured: the cheaper measured deployment first (then more capacity).
    expect(v.map((e) => e.measuredRank)).toEqual([1, 2]);
    const [a, b] = v as [Entry, Entry];
    expect((a.measuredCostPerHour as number) < (b.measuredCostPerHour as number) || (a.measuredCostPerHour === b.measuredCostPerHour && (a.measuredCapacity as number) >= (b.measuredCapacity as number))).toBe(true);
    // The difference is reported beside the stated precision, whichever way it went.
    expect(r.stderr).toMatch(/Predicted capacity \(req\/s\) \| Measured capacity \(req\/s\) \| Difference \| Within precision/);
    expect(r.stderr).toMatch(/measured (within|outside) ±25% of the prediction/);
    const files = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')) as PlanDoc;
    expect(files.verifications).toHaveLength(2);
    expect(existsSync(join(out, 'verify', 'verify.json'))).toBe(true);
    measured = v;
  }, 180_000);

  it('--save-calibration keeps measured/simulated capacity per deployment, and a later plan --calibration FILE plans on it', async () => {
    expect(measured).toHaveLength(2);
    const saved = JSON.parse(readFileSync(calibration, 'utf8')) as { capacityFactors: Array<{ engine: string; factor: number; measuredCapacity: number; simulatedCapacity: number }> };
    expect(saved.capacityFactors).toHaveLength(2);
    for (const e of measured) {
      const f = saved.capacityFactors.find((x) => x.engine === e.candidate.engine);
      expect(f?.measuredCapacity).toBe(e.measuredCapacity);
      expect(f?.simulatedCapacity).toBeCloseTo(e.predictedCapacity, 4);
      expect(f?.factor).toBeCloseTo((e.measuredCapacity as number) / e.predictedCapacity, 5);
    }
    const r = await mainInProcess([...plan, '--calibration', calibration, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as PlanDoc;
    for (const e of measured) {
      const c = doc.candidates.find((x) => x.engine === e.candidate.engine);
      // The same deterministic search, scaled by the measured factor: the plan now predicts what was measured.
      expect(c?.capacityFactor).toBeCloseTo((e.measuredCapacity as number) / e.predictedCapacity, 5);
      expect((c?.capacityPerReplica as number) / (e.measuredCapacity as number)).toBeCloseTo(1, 4);
    }
    expect(doc.notes.join('\n')).toMatch(/measured capacity factors .* scale 2 candidates/);
    // predict reads the same file (its constants) and names the measured factor its rows do not apply.
    const p = await mainInProcess(['predict', '--engine', 'vllm', '--model', 'Qwen2-7B-Instruct', '--gpu', 'A100-80GB', '--rate', '2', '--max-seconds', '2', '--calibration', calibration, '--json']);
    expect(p.code, p.stderr).toBe(0);
    const vllm = measured.find((e) => e.candidate.engine === 'vllm') as Entry;
    expect((JSON.parse(p.stdout) as { notes: string[] }).notes.join('\n')).toMatch(
      new RegExp(`holds a measured capacity factor for this deployment: ×[\\d.]+ \\(${vllm.measuredCapacity} req/s measured`));
  }, 60_000);

  it('a candidate whose server fails to start is reported with its reason and log, and the command exits 1', async () => {
    const out = join(tmp, 'broken');
    const r = await mainInProcess([...plan, '--verify', '1', '--server-cmd', 'echo loading {model} on {gpus}x {gpu}; exit 3 # port {port}', '--json', '--out', out, '--format', 'json']);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(1);
    const [e] = (JSON.parse(r.stdout) as PlanDoc).verifications as Entry[];
    expect(e?.status).toBe('failed-to-start');
    expect(e?.error).toMatch(/exited with code 3 before it was ready/);
    expect(e?.logTail).toMatch(/loading Qwen2-7B-Instruct on 1x A100-80GB/);
    expect(e?.measuredCapacity).toBeNull();
    expect(e?.runDir).toBeNull();
    expect(r.stderr).toMatch(/failed-to-start — .*exited with code 3/);
  }, 60_000);

  it('a capacity factor in a calibration file scales that deployment only, in capacity and at its operating point', async () => {
    const before = JSON.parse((await mainInProcess([...plan, '--json'])).stdout) as PlanDoc;
    const vllm = before.candidates.find((c) => c.engine === 'vllm')?.capacityPerReplica as number;
    const file = join(tmp, 'half.json');
    writeFileSync(file, JSON.stringify({
      capacityFactors: [{ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1, quant: 'fp16', factor: 0.5, simulatedCapacity: vllm, measuredCapacity: vllm / 2,
        slo: '99% of requests within ttft:1000,itl:30', workload: 'hand-written', measuredAt: '2026-11-28T00:00:00.000Z' }],
    }));
    const r = await mainInProcess([...plan, '--calibration', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const after = JSON.parse(r.stdout) as PlanDoc;
    const v = after.candidates.find((c) => c.engine === 'vllm');
    expect(v?.capacityPerReplica).toBeCloseTo(vllm / 2, 9);
    expect(v?.capacityFactor).toBe(0.5);
    expect(v?.atLoad?.ratePerReplica).toBe(4);
    expect(after.candidates.find((c) => c.engine === 'sglang')?.capacityPerReplica).toBe(before.candidates.find((c) => c.engine === 'sglang')?.capacityPerReplica);
    expect(after.candidates.find((c) => c.engine === 'sglang')?.capacityFactor).toBeUndefined();
  }, 60_000);

  it('Ctrl-C during a measurement stops that server, launches no other candidate, and exits 130', async () => {
    const out = join(tmp, 'interrupted');
    const child = spawn(process.execPath, [...cliEntry, ...plan, '--verify', '2', '--server-cmd', 'sim', '--json', '--out', out, '--format', 'json'], {
      cwd: repoRoot, env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      // The first probe row has started against the first launched server.
      if (!sent && /measuring capacity into/.test(stderr)) {
        sent = true;
        setTimeout(() => child.kill('SIGINT'), 500);
      }
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(killer);
    expect(sent, stderr.slice(-2000)).toBe(true);
    expect(code, stderr.slice(-2000)).toBe(130);
    const v = (JSON.parse(stdout) as PlanDoc).verifications as Entry[];
    expect(v).toHaveLength(1);
    expect(v[0]?.status).toBe('interrupted');
    expect(groupGone(v[0]?.pid as number)).toBe(true);
    expect(v[0]?.portFree).toBe(true);
  }, 150_000);

  it('usage mistakes are one line and exit 2, before any search runs', async () => {
    const typo = await mainInProcess([...plan, '--verify', '1', '--server-cmd', 'srv --port {prot}']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^error: --server-cmd: unknown placeholder \{prot\}/m);
    const noCmd = await mainInProcess([...plan, '--verify', '1']);
    expect(noCmd.code).toBe(2);
    expect(noCmd.stderr).toMatch(/^error: --verify needs --server-cmd/m);
    const noVerify = await mainInProcess([...plan, '--server-cmd', 'sim']);
    expect(noVerify.code).toBe(2);
    expect(noVerify.stderr).toMatch(/--server-cmd goes with --verify N/);
  }, 60_000);
});
