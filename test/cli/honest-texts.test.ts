import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { completedRate, noSuccessMessage } from '../../src/cli/run-outcome.js';
import { SATURATION_STOP, windowRulesFor } from '../../src/load/profiles.js';
import { SteadyWindow } from '../../src/load/window.js';
import { healthLine, judgeClientHealth, type ClientHealth } from '../../src/metrics/health.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { runCli } from '../helpers/cli.js';
import { startSlotServer } from '../helpers/slot-server.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-honest-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('issue 36 item 10: an open loop far past capacity', () => {
  it('stops as over-saturated once its requests in flight reach the limit, completions or not', () => {
    const rules = windowRulesFor('open', { maxSeconds: 5 }, { saturationStop: true, dispersion: 0 });
    expect(rules?.saturationStop?.maxInFlight).toBe(4096);
    const small = { ...rules!, saturationStop: { ...SATURATION_STOP, dispersion: 0, maxInFlight: 5 } };
    const w = new SteadyWindow(small, 0, Infinity);
    for (let i = 0; i < 4; i++) {
      expect(w.sending(i * 10)).toBe(true);
      w.onSend(i * 10);
    }
    expect(w.overSaturatedReason).toBeUndefined();
    w.onSend(40);
    expect(w.sending(41)).toBe(false);
    expect(w.overSaturatedReason).toBe('over-saturated: 5 requests in flight, the most an open loop holds (past it they would wait in the client), 0 completions for 5 sends in 0.0 s');
    expect(completedRate(w.overSaturatedReason as string)).toEqual({ completions: 0, seconds: 0 });
    // A client cap (--max-concurrency) is the user's bound: the limit does not apply.
    const capped = new SteadyWindow(small, 0, 8);
    for (let i = 0; i < 8; i++) capped.onSend(i);
    expect(capped.overSaturatedReason).toBeUndefined();
  });

  it('predict --rate 5000: the row stops at 4096 requests in flight (virtual time, deterministic)', async () => {
    const r = await runCli(['predict', '--rate', '5000', '--max-seconds', '5', '--out', join(tmp, 'predict')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/over-saturated: 4096 requests in flight, the most an open loop holds/);
  });

  it('no row succeeded because every row was over-saturated: the error says the rate is past the server, with what it completed', () => {
    const row = (rate: number, reason: string): StageSummary => ({ label: `asynchronous@${rate} req/sec`, targetRate: rate, overSaturated: reason }) as unknown as StageSummary;
    const stopped = row(1000, 'over-saturated: 166 completions for 5899 sends in 5.9 s after the first completion, in flight 10886 → 16618, time to first token 563 → 5028 ms');
    expect(noSuccessMessage([stopped])).toBe(
      '1000 req/s is far past what this server holds (it completed ~28.1 req/s; the row was stopped as over-saturated, see the note under the table): lower --rate',
    );
    const none = row(5000, 'over-saturated: 4096 requests in flight, the most an open loop holds (past it they would wait in the client), 0 completions for 4096 sends in 0.8 s');
    expect(noSuccessMessage([none])).toMatch(/^5000 req\/s is far past what this server holds \(nothing completed in 0.8 s;/);
    // A row that failed for another reason keeps the plain line.
    expect(noSuccessMessage([stopped, { label: 'x', targetRate: 1 } as unknown as StageSummary])).toBe('no request succeeded; see the Failed column above');
  });

  it('run --rate 500 against a server that holds 50 req/s: "far past what this server holds", not "no request succeeded"', async () => {
    const server = await startSlotServer({ slots: 1, prefillMs: 0, tokenMs: 5, promptTokens: 16 });
    try {
      const out = join(tmp, 'over');
      const r = await runCli(
        ['run', '--target', server.url, '--api', 'openai-completions', '--rate', '500', '--max-seconds', '2', '--output-tokens', '4', '--prompt-tokens', '16', '--tokenizer', 'approx', '--out', out, '--no-progress'],
        { timeoutMs: 120_000 },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).not.toMatch(/no request succeeded/);
      // What it completed depends on the machine's load; that it is past the server does not.
      expect(r.stderr).toMatch(/error: 500 req\/s is far past what this server holds \((it completed ~[\d.]+ req\/s|nothing completed in [\d.]+ s); the row was stopped as over-saturated, see the note under the table\): lower --rate/);
    } finally {
      await server.close();
    }
  });
});

describe('issue 36 item 10: client health', () => {
  const base: ClientHealth = { dispatchLagP99Ms: 0, connectWaitP99Ms: 0, eventLoopDelayP99Ms: 1.5, clientCpuShare: 0.32, clientLimited: false };

  it('a dispatch lag from no sample is shown as —, a measured one as its value', () => {
    expect(healthLine({ ...base, dispatchLagSamples: 0 })).toMatch(/^client health: dispatch lag p99 —, event-loop delay p99 1.50 ms/);
    expect(healthLine({ ...base, dispatchLagP99Ms: 0.4, dispatchLagSamples: 120 })).toMatch(/dispatch lag p99 0.40 ms/);
  });

  it('late timers with the client thread mostly idle do not blame the client; they name the busy machine', () => {
    const v = judgeClientHealth({ dispatchLagP99Ms: 26, eventLoopDelayP99Ms: 4, processCpuShare: 0.3, mainThreadCpuShare: 0.05, cpuWaitShare: 0.2 });
    expect(v.clientLimited).toBe(false);
    expect(v.warning).not.toMatch(/client may be the bottleneck/);
    expect(v.warning).toBe(
      "timers fired late (dispatch lag p99 26.0 ms) while the client was mostly idle (its thread used 5% of a core), so not from the client's own load: " +
        'its thread waited for a CPU 20% of the time: other work on this machine held the cores; latencies may include up to that delay — a quieter machine gives cleaner figures',
    );
    // Without run-queue figures (not Linux), the cause is not claimed as measured.
    expect(judgeClientHealth({ dispatchLagP99Ms: 26, eventLoopDelayP99Ms: 4, processCpuShare: 0.05 }).warning).toMatch(/other processes on this machine, or pauses, held it up/);
  });

  it('late timers with the client thread busy, or a client using a whole core, blame the client', () => {
    const busy = judgeClientHealth({ dispatchLagP99Ms: 26, eventLoopDelayP99Ms: 30, processCpuShare: 0.8, mainThreadCpuShare: 0.7, cpuWaitShare: 0 });
    expect(busy).toEqual({ clientLimited: true, warning: 'the client may be the bottleneck (dispatch lag p99 26.0 ms, event-loop delay p99 30.0 ms, its thread used 70% of a core): figures may understate the server' });
    expect(judgeClientHealth({ eventLoopDelayP99Ms: 2, processCpuShare: 0.95 }).clientLimited).toBe(true);
    expect(judgeClientHealth({ dispatchLagP99Ms: 15, eventLoopDelayP99Ms: 2, processCpuShare: 0.2, mainThreadCpuShare: 0.1, workerBusyShare: 0.8 }).warning).toMatch(
      /^the client may be the bottleneck \(dispatch lag p99 15.0 ms, its busiest load worker 80% busy\)/,
    );
    // In time, quiet: nothing to say (and an unmeasured lag is not late).
    expect(judgeClientHealth({ eventLoopDelayP99Ms: 3, processCpuShare: 0.1, mainThreadCpuShare: 0.05 })).toEqual({ clientLimited: false });
  });

  it('run: summary.json counts the dispatch-lag samples and the main thread figures', async () => {
    const server = await startSlotServer({ slots: 4, prefillMs: 2, tokenMs: 1, promptTokens: 16 });
    try {
      const out = join(tmp, 'health');
      const r = await runCli(['run', '--target', server.url, '--api', 'openai-completions', '--rate', '5', '--max-seconds', '1', '--output-tokens', '4', '--prompt-tokens', '16', '--tokenizer', 'approx', '--out', out, '--no-progress']);
      expect(r.code, r.stderr).toBe(0);
      const health = (JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { health: ClientHealth }).health;
      expect(health.dispatchLagSamples).toBeGreaterThan(0);
      if (process.platform === 'linux') expect(health.mainThreadCpuShare).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});
