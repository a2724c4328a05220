import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mainInProcess } from '../helpers/main-in-process-rows.js';
import { readRunFolder } from '../helpers/run-folder.js';
import { startSlotServer } from '../helpers/slot-server.js';

/**
 * Issue 36 item 2, last part: after a row that cut its requests (an over-saturated probe, or --drain 0), against a
 * server that keeps serving abandoned requests (llama.cpp does; so does this 2-slot test server), the next row starts
 * on an idle server, and the note says what it waited for — not "every request of the previous row had been
 * answered". What is asserted is deterministic: the server's own count of requests that arrived while a cut one was
 * still running or queued, the cut count in requests.jsonl, and the texts. The runs go through the CLI's own main in
 * this process (test/helpers/main-in-process-rows.ts).
 */
describe('the row after a row that cut its requests', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'ib-cut-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  const common = ['--output-tokens', '8', '--prompt-tokens', '32', '--tokenizer', 'approx', '--no-progress'];

  it('with /metrics: waits until running + waiting read 0, so no request of the next row finds a cut one still served; the note names the cut and the wait', async () => {
    // 2 slots × (5 ms + 8 × 20 ms): about 12 req/s. 40 req/s piles up a queue, cut at the row's end (--drain 0) or earlier.
    const server = await startSlotServer({ slots: 2, prefillMs: 5, tokenMs: 20, metrics: true, cacheKeyChars: 1_000_000 });
    try {
      const out = join(tmp, 'metrics');
      // Half-second rows: the first still piles up a queue of cut requests (it is cut at its end or stopped as
      // over-saturated before), which is what the second row must wait out.
      const res = await mainInProcess(['run', '--target', server.url, '--profile', 'constant', '--rate', '40,2', '--max-seconds', '0.5', '--drain', '0', '--out', out, ...common]);
      expect(res.code, res.stderr).toBe(0);
      const { doc, records } = readRunFolder(out);
      const cut = records.filter((r) => r.stage === 0 && r.status === 'incomplete').length;
      expect(cut).toBeGreaterThan(0);
      expect(server.stats.abandonedServed).toBeGreaterThan(0);
      // the next row's requests never met a cut request still on the server
      expect(server.stats.arrivedOnAbandoned).toBe(0);
      const after = doc.stages[1]!;
      expect(after.idleWait).toMatchObject({ idle: true });
      expect(after.idleWait?.method).toBe(`after asynchronous@40.00 req/sec cut ${cut} request${cut === 1 ? '' : 's'}: until the server's /metrics read running + waiting = 0 twice, 200 ms apart`);
      const note = res.stdout.split('\n').find((l) => l.includes('idle server before each row')) ?? '';
      expect(note).toContain(`asynchronous@2.00 req/sec ${after.idleWait!.waitedS.toFixed(1)} s (after asynchronous@40.00 req/sec cut ${cut} request`);
      expect(note).not.toContain('every request of the previous row had been answered');
    } finally {
      await server.close();
    }
  }, 300_000);

  // Also the check, once in between-rows.test.ts, that without /metrics a one-token probe decides the server is idle
  // again after a row that cut requests (the throughput row's incomplete count, the next row's idle wait).
  it('without /metrics: the note says the row after the cut waited for a one-token probe, and keeps "every request … answered" for the rows where it is true', async () => {
    const server = await startSlotServer({ slots: 2, prefillMs: 40, tokenMs: 8, metrics: false });
    try {
      const out = join(tmp, 'probe');
      // One rate after the throughput row: the row after the cut, and a row before it whose previous row was answered.
      const res = await mainInProcess(['run', '--target', server.url, '--profile', 'sweep', '--sweep-rates', '1', '--max-seconds', '0.5', '--drain', '0', '--out', out, ...common]);
      expect(res.code, res.stderr).toBe(0);
      const { doc, records } = readRunFolder(out);
      const at = doc.stages.findIndex((s) => s.label === 'throughput');
      const cut = records.filter((r) => r.stage === at && r.status === 'incomplete').length;
      expect(cut).toBeGreaterThan(0);
      expect(doc.stages[at]!.requests.incomplete).toBeGreaterThan(0);
      const after = doc.stages[at + 1]!;
      expect(after.idleWait?.idle).toBe(true);
      expect(after.idleWait?.method).toMatch(/probe TTFT/);
      expect(after.idleWait?.method).toMatch(new RegExp(`^after throughput cut ${cut} requests?: until a one-token probe's TTFT was back to the synchronous level \\(probe TTFT \\d+ ms, within 1\\.5× the synchronous \\d+ ms\\)$`));
      const note = res.stdout.split('\n').find((l) => l.includes('idle server before each row')) ?? '';
      // the row after the cut is listed with its own wait; "every request … answered" is said of the other rows only
      expect(note).toMatch(new RegExp(`: ${after.label.replace(/[.@]/g, '\\$&')} \\d+\\.\\d s \\(after throughput cut ${cut} requests?: until a one-token probe`));
      expect(note).toMatch(/; the other rows \(every request of the previous row had been answered\)$/);
    } finally {
      await server.close();
    }
  }, 300_000);
});
