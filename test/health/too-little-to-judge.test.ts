import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HealthMonitor, judgeClientHealth } from '../../src/metrics/health.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { startFixedDelayServer } from '../helpers/openai-server.js';
import { runInProcess } from '../helpers/run-in-process.js';

/**
 * Issue 51 item 10: after 5 instant 501 replies a WARNING said "the client may be the bottleneck (event-loop delay
 * p99 22.8 ms, its thread used 70% of a core)" — figures of the client starting, over a run with nothing measured.
 * With no successful request, or rows shorter than a second in all, there is no verdict (the figures stay).
 */
const row = (ok: number, durationS: number): StageSummary =>
  ({ kind: 'closed', durationS, requests: { ok }, metrics: { timerLagMs: { p99: 0.3, count: 5 } } }) as unknown as StageSummary;

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // deliberately block the event loop
  }
}

describe('no client-health verdict with too little to judge', () => {
  // The newcomer's figures, as judgeClientHealth got them.
  const seen = { eventLoopDelayP99Ms: 22.8, processCpuShare: 0.75, mainThreadCpuShare: 0.7, cpuWaitShare: 0 };

  it('no successful request, or rows under a second: no warning, not client-limited', () => {
    expect(judgeClientHealth({ ...seen, okRequests: 0, rowsS: 0.02 })).toEqual({ clientLimited: false });
    expect(judgeClientHealth({ ...seen, okRequests: 0, rowsS: 30 })).toEqual({ clientLimited: false });
    expect(judgeClientHealth({ ...seen, okRequests: 5, rowsS: 0.3 })).toEqual({ clientLimited: false });
    // A whole core used over a sub-second run is the client starting, not saturated.
    expect(judgeClientHealth({ eventLoopDelayP99Ms: 2, processCpuShare: 0.95, okRequests: 5, rowsS: 0.3 })).toEqual({ clientLimited: false });
  });

  it('the same figures over a run that measured something still blame the client', () => {
    expect(judgeClientHealth({ ...seen, okRequests: 200, rowsS: 20 })).toEqual({
      clientLimited: true,
      warning: 'the client may be the bottleneck (event-loop delay p99 22.8 ms, its thread used 70% of a core): figures may understate the server',
    });
  });

  it('HealthMonitor: a blocked event loop over 5 failed requests gives its figures and no verdict', async () => {
    const monitor = new HealthMonitor();
    for (let i = 0; i < 4; i++) {
      busy(120);
      await new Promise((r) => setTimeout(r, 12));
    }
    const h = monitor.finish([row(0, 0.02)]);
    expect(h.eventLoopDelayP99Ms).toBeGreaterThan(20);
    expect(h.warning).toBeUndefined();
    expect(h.clientLimited).toBe(false);
  });

  describe('run against a server that answers 501 to everything', () => {
    let tmp: string;
    beforeAll(() => {
      tmp = mkdtempSync(join(tmpdir(), 'ib-health-501-'));
    });
    afterAll(() => rmSync(tmp, { recursive: true, force: true }));

    it('reports the failure, and no client-health WARNING', async () => {
      const server = await startFixedDelayServer({ ttftMs: 0, itlMs: 0, failWith: { status: 501, body: '{"error":"Unsupported method"}' } });
      try {
        const res = await runInProcess(['--target', server.url, '--api', 'openai-chat', '--model', 'test-model', '--profile', 'concurrent', '--concurrency', '1', '--max-requests', '5', '--tokenizer', 'approx', '--no-progress', '--out', join(tmp, 'run')]);
        expect(res.code).toBe(1);
        expect(res.outcome.doc?.health?.warning).toBeUndefined();
        expect(res.outcome.doc?.health?.clientLimited).toBe(false);
        expect(`${res.stdout}${res.stderr}`).toMatch(/client health: /);
        expect(`${res.stdout}${res.stderr}`).not.toMatch(/WARNING: the client may be the bottleneck/);
      } finally {
        await server.close();
      }
    });
  });
});
