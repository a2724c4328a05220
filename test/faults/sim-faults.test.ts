import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { RunSummaryDoc } from '../../src/report/run-summary.js';
import { startSimServer } from '../../src/sim/server/index.js';
import { runCli } from '../helpers/cli.js';

// Which client error each simulated fault must become.
const EXPECTED_CODE: Record<string, string> = {
  '429': 'E_HTTP_STATUS:429',
  '500': 'E_HTTP_STATUS:500',
  '503': 'E_HTTP_STATUS:503',
  reset: 'E_RESET',
  stall: 'E_TIMEOUT_IDLE',
  malformed: 'E_STREAM_PARSE',
  truncate: 'E_STREAM_TRUNCATED',
};

describe('fault matrix: the simulator injects every fault it knows', () => {
  it('each fault is classified with its own code and counted; successful requests are unaffected', async () => {
    const sim = await startSimServer({
      engine: 'vllm',
      model: 'Qwen2-7B-Instruct',
      gpu: 'A100-80GB',
      gpus: 1,
      seed: 11,
      modelTimeScale: 0.05,
      // stall (1.5 s) outlasts the client's 0.4 s idle timeout; a slow first byte (0.2 s) stays under the first-byte timeout.
      faults: '429:0.06,500:0.06,503:0.06,reset:0.06,stall:0.06,malformed:0.06,truncate:0.06,slow-first-byte:0.06,stall-ms:1500,slow-ms:200,retry-after:2',
    });
    const out = mkdtempSync(join(tmpdir(), 'inferbench-faults-'));
    try {
      const res = await runCli([
        'run', '--target', sim.url, '--profile', 'concurrent', '--concurrency', '16', '--max-requests', '400',
        '--prompt-tokens', '32', '--output-tokens', '16', '--timeout-idle', '0.4', '--timeout-first-byte', '2',
        '--out', out, '--no-progress',
      ]);
      expect(res.stderr).not.toMatch(/Unhandled|internal error|\n\s+at /);
      expect(res.code).toBe(0);
      const all = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
      // The row's cool-down requests (sent after its window, while the load stays on) are on disk too; the matrix is
      // about the 400 measured requests.
      const records = all.filter((r) => r.cooldown !== true);
      expect(records).toHaveLength(400);

      // A stalled stream ends on the server only after its stall, once the client has long given up.
      for (let i = 0; i < 50 && sim.truth.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 100));
      // The server's truth of the measured requests only, joined by the id every streamed reply carries (a fault
      // strikes after the first token, so faulted replies carry it too).
      const measuredIds = new Set(records.map((r) => r.serverRequestId));
      expect(measuredIds.size).toBe(400);
      const truth = sim.truth.finished().filter((t) => measuredIds.has(String(t.id)));
      expect(truth).toHaveLength(400);
      const faultCount = (kind: string): number => truth.filter((t) => t.fault === kind).length;
      const clientCount = (code: string): number =>
        records.filter((r) => r.error && `${r.error.code}${r.error.httpStatus !== undefined ? `:${r.error.httpStatus}` : ''}` === code).length;
      for (const [fault, code] of Object.entries(EXPECTED_CODE)) {
        expect(faultCount(fault), fault).toBeGreaterThan(5);
        expect(clientCount(code), `${fault} → ${code}`).toBe(faultCount(fault));
      }
      const throttled = records.find((r) => r.error?.httpStatus === 429);
      expect(throttled?.error?.message).toMatch(/Retry-After: 2/);

      // Slow first bytes are slow, not failed; every success carries the exact forced length.
      const ok = records.filter((r) => r.status === 'ok');
      const faulted = truth.filter((t) => t.fault !== null && t.fault !== 'slow-first-byte').length;
      expect(ok.length).toBe(400 - faulted);
      for (const r of ok) expect(r.outputTokens).toBe(16);
      expect(Math.max(...ok.map((r) => r.ttftMs ?? 0))).toBeGreaterThan(200);

      const doc = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummaryDoc;
      const row = doc.stages[0]!;
      expect(row.requests.errors).toBe(faulted);
      expect(row.failureShare).toBeCloseTo(faulted / 400, 10);
      const line = res.stdout.split('\n').find((l) => l.includes('concurrent@16'))!;
      expect(line).toContain(`${faulted}/400 (${Math.round((faulted / 400) * 100)}%)`);
      expect(line).toContain('E_HTTP_STATUS:429×');
    } finally {
      await sim.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});
