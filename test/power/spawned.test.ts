/**
 * `--power nvidia-smi` and `--power cmd:COMMAND` through fake executables written into a temp folder: the sampler
 * spawns them, reads their lines, integrates the window, and ends them (the whole process group) when it stops.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { PowerSampler } from '../../src/power/sampler.js';
import { sleep } from './exporters.js';

const dir = mkdtempSync(join(tmpdir(), 'inferbench-power-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** nvidia-smi's query loop: `timestamp, index, power.draw` (local time, ms) for two GPUs every 100 ms, until killed. */
const FAKE_NVIDIA_SMI = `#!/usr/bin/env node
const fs = require('node:fs');
fs.writeFileSync(process.env.FAKE_PID_FILE, String(process.pid));
if (!process.argv.includes('--query-gpu=timestamp,index,power.draw') || !process.argv.includes('-lms')) { console.error('unexpected arguments ' + process.argv.slice(2).join(' ')); process.exit(6); }
const p = (n, w = 2) => String(n).padStart(w, '0');
const stamp = (d) => d.getFullYear() + '/' + p(d.getMonth() + 1) + '/' + p(d.getDate()) + ' ' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()) + '.' + p(d.getMilliseconds(), 3);
const tick = () => { const s = stamp(new Date()); process.stdout.write(s + ', 0, 250.00\\n' + s + ', 1, 150.00\\n'); };
tick();
setInterval(tick, 100);
`;

/** A command printing JSONL power lines for GPU 0 at 120 W every 100 ms. */
const FAKE_CMD = `const tick = () => process.stdout.write(JSON.stringify({ t: Date.now(), gpu: 0, watts: 120 }) + '\\n');
require('node:fs').writeFileSync(process.env.FAKE_PID_FILE, String(process.pid));
tick();
setInterval(tick, 100);
`;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
  return !alive(pid);
}

describe('spawned power sources', () => {
  it('nvidia-smi from PATH: both GPUs read, each or together, and the loop ended at stop', async () => {
    const bin = join(dir, 'bin');
    const pidFile = join(dir, 'smi.pid');
    rmSync(bin, { recursive: true, force: true });
    mkdirSync(bin);
    writeFileSync(join(bin, 'nvidia-smi'), FAKE_NVIDIA_SMI);
    chmodSync(join(bin, 'nvidia-smi'), 0o755);
    const oldPath = process.env['PATH'];
    process.env['PATH'] = `${bin}:${oldPath ?? ''}`;
    process.env['FAKE_PID_FILE'] = pidFile;
    const s = new PowerSampler({ kind: 'nvidia-smi' });
    try {
      const started = await s.start();
      expect(started).toEqual({ ok: true });
      await sleep(1500);
      const now = performance.now();
      const all = s.joulesBetween(now - 1100, now - 200);
      expect(all.gpus).toEqual([0, 1]);
      expect(Math.abs(all.joules - 400 * 0.9) / 360).toBeLessThan(0.01);
      expect(all.coverage).toBe(1);
    } finally {
      s.stop();
      process.env['PATH'] = oldPath;
    }
    expect(await gone(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('nvidia-smi missing from PATH: says so', async () => {
    const oldPath = process.env['PATH'];
    process.env['PATH'] = join(dir, 'empty');
    try {
      const s = new PowerSampler({ kind: 'nvidia-smi' });
      const r = await s.start();
      expect(r.ok).toBe(false);
      expect(r.problem).toBe('nvidia-smi was not found on PATH');
    } finally {
      process.env['PATH'] = oldPath;
    }
  });

  it('cmd:COMMAND through the shell: JSONL readings on the wall clock, the command ended at stop', async () => {
    const script = join(dir, 'power.cjs');
    const pidFile = join(dir, 'cmd.pid');
    writeFileSync(script, FAKE_CMD);
    process.env['FAKE_PID_FILE'] = pidFile;
    const s = new PowerSampler({ kind: 'cmd', command: `${JSON.stringify(process.execPath)} ${JSON.stringify(script)}` });
    try {
      expect((await s.start()).ok).toBe(true);
      await sleep(1300);
      const now = performance.now();
      const w = s.joulesBetween(now - 900, now - 200);
      expect(w.gpus).toEqual([0]);
      expect(Math.abs(w.joules - 120 * 0.7) / 84).toBeLessThan(0.01);
    } finally {
      s.stop();
    }
    expect(await gone(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('a command that prints no reading: says it exited', async () => {
    const s = new PowerSampler({ kind: 'cmd', command: 'echo not-json; exit 3' });
    const r = await s.start();
    expect(r.ok).toBe(false);
    expect(r.problem).toMatch(/exited \(code 3\) before printing a power reading/);
  });
});
