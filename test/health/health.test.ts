import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HealthMonitor, healthLine, type ClientHealth } from '../../src/metrics/health.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import type { RunSummaryDoc } from '../../src/report/run-summary.js';
import { runCli } from '../helpers/cli.js';

/** Only the fields HealthMonitor reads: a row of 20 successes over 10 s (enough to judge the client by). */
function stage(kind: StageSummary['kind'], timerLagP99: number): StageSummary {
  return { kind, durationS: 10, requests: { ok: 20 }, metrics: { timerLagMs: { p99: timerLagP99, count: 20 } } } as unknown as StageSummary;
}

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // deliberately block the event loop
  }
}

const FIELDS: Array<keyof ClientHealth> = ['dispatchLagP99Ms', 'eventLoopDelayP99Ms', 'clientCpuShare', 'clientLimited'];

describe('client health', () => {
  it('reports every field as a finite number, with the dispatch lag of non-burst stages', () => {
    const h = new HealthMonitor().finish([stage('open', 0.4), stage('closed', 0.2), stage('burst', 900)]);
    for (const f of FIELDS) expect(h).toHaveProperty(f);
    expect(Number.isFinite(h.eventLoopDelayP99Ms)).toBe(true);
    expect(Number.isFinite(h.clientCpuShare)).toBe(true);
    // a burst sends "everything at once" only as fast as it can: not lateness against a schedule
    expect(h.dispatchLagP99Ms).toBe(0.4);
  });

  it('warns that the client is the bottleneck when the event loop is blocked', async () => {
    const monitor = new HealthMonitor();
    // blocks far above the 20 ms threshold, often enough to own the p99 of the loop-delay histogram
    for (let i = 0; i < 6; i++) {
      busy(150);
      await new Promise((r) => setTimeout(r, 12));
    }
    const h = monitor.finish([stage('burst', 0)]);
    expect(h.eventLoopDelayP99Ms).toBeGreaterThan(20);
    expect(h.warning).toMatch(/event-loop delay p99/);
    // Whom it blames follows the thread's CPU, which a loaded machine lowers (the spin waits for a core too):
    // the decision itself is tested on fixed figures in test/cli/honest-texts.test.ts.
    const own = h.mainThreadCpuShare ?? h.clientCpuShare;
    expect(h.clientLimited).toBe(own >= 0.5);
    expect(healthLine(h)).toMatch(/^client health: dispatch lag p99 —, event-loop delay p99 [\d.]+ ms, client CPU \d+%.*\nWARNING: /);
  });

  it('warns on a late schedule even when the loop looks idle, without blaming an idle client', () => {
    const h = new HealthMonitor().finish([stage('open', 50)]);
    expect(h.warning).toMatch(/dispatch lag p99 50\.0 ms/);
    if ((h.mainThreadCpuShare ?? h.clientCpuShare) < 0.5) {
      expect(h.clientLimited).toBe(false);
      expect(h.warning).toMatch(/^timers fired late .* while the client was mostly idle/);
    }
  });

  it('inferbench run prints one health line and stores the fields in summary.json', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'inferbench-health-'));
    try {
      const out = join(tmp, 'run');
      const res = await runCli(['run', '--profile', 'synchronous', '--max-requests', '3', '--output-tokens', '4', '--prompt-tokens', '16', '--out', out, '--no-progress']);
      expect(res.code).toBe(0);
      const lines = res.stdout.split('\n').filter((l) => l.startsWith('client health: '));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/dispatch lag p99 [\d.]+ ms, event-loop delay p99 [\d.]+ ms, client CPU \d+%/);
      const doc = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummaryDoc;
      for (const f of FIELDS) expect(doc.health).toHaveProperty(f);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
