import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/metrics/record.js';
import { cliEntry, repoRoot, runCli } from '../helpers/cli.js';
import { startFixedDelayServer } from '../helpers/openai-server.js';

const stagesIn = (dir: string): number => {
  try {
    return (JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { stages: unknown[] }).stages.length;
  } catch {
    return 0;
  }
};

describe('--resume', () => {
  it('continues an interrupted sweep from its first unfinished row with the same config', async () => {
    const server = await startFixedDelayServer({ ttftMs: 5, itlMs: 2 });
    const out = mkdtempSync(join(tmpdir(), 'inferbench-resume-'));
    try {
      const args = ['run', '--target', server.url, '--profile', 'sweep', '--max-seconds', '0.6', '--output-tokens', '8', '--max-concurrency', '8', '--out', out, '--no-progress'];
      const child = spawn(process.execPath, [...cliEntry, ...args], { cwd: repoRoot, stdio: 'ignore' });
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (stagesIn(out) >= 3) {
            clearInterval(poll);
            resolve();
          }
        }, 50);
      });
      child.kill('SIGINT');
      expect(await new Promise((r) => child.on('close', r))).toBe(130);
      const before = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { complete: boolean; stages: Array<{ label: string }> };
      expect(before.complete).toBe(false);
      // Ctrl-C lets go of the folder (store/run-lock.ts).
      expect(existsSync(join(out, '.inferbench-run.lock'))).toBe(false);
      const finishedRows = before.stages.filter((s) => s.label).length;

      const res = await runCli(['run', '--resume', out, '--no-progress']);
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/resuming sweep profile at row \d+/);
      const after = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { complete: boolean; stages: Array<{ index: number; label: string; requests: { total: number; warmup: number; cooldown?: number } }> };
      expect(after.complete).toBe(true);
      expect(after.stages).toHaveLength(11);
      expect(after.stages.map((s) => s.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      // The rows run before the stop are kept as they were.
      expect(after.stages.slice(0, 2).map((s) => s.label)).toEqual(['synchronous', 'throughput']);
      expect(finishedRows).toBeGreaterThanOrEqual(3);

      const records = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
      const ids = records.map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      // Every record of a row is on disk: measured, ramp-up and cool-down.
      for (const s of after.stages) expect(records.filter((r) => r.stage === s.index)).toHaveLength(s.requests.total + s.requests.warmup + (s.requests.cooldown ?? 0));

      const again = await runCli(['run', '--resume', out]);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/^error: --resume .*: that run already finished every row/);
    } finally {
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('refuses a folder that is not a run', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'inferbench-resume-bad-'));
    try {
      const res = await runCli(['run', '--resume', empty]);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/^error: --resume .*: no manifest.json there/);
      expect(existsSync(join(empty, 'requests.jsonl'))).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
