import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { interval, studentT975 } from '../../src/metrics/repeats.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { runCli } from '../helpers/cli.js';
import { startSlotServer } from '../helpers/slot-server.js';

describe('--repeat N: Student-t intervals over repeated rows (issue 14, item 6)', () => {
  it('interval: mean ± t(0.975, n−1)·s/√n', () => {
    const ci = interval([9, 10, 11]);
    expect(ci.mean).toBe(10);
    expect(ci.stddev).toBeCloseTo(1, 12);
    expect(ci.halfWidth).toBeCloseTo((4.303 * 1) / Math.sqrt(3), 10);
    expect(studentT975(1)).toBe(12.706);
    expect(studentT975(29)).toBe(2.045);
    expect(studentT975(200)).toBeCloseTo(1.972, 3);
    expect(interval([5]).halfWidth).toBe(0);
  });

  it('run --repeat 3: each row three times with fresh prompts, the table prints mean ± half-width, summary.json keeps each run', async () => {
    const server = await startSlotServer({ slots: 4, prefillMs: 10, tokenMs: 3, promptTokens: 32 });
    const out = join(mkdtempSync(join(tmpdir(), 'ib-repeat-')), 'run');
    try {
      const res = await runCli([
        'run', '--target', server.url, '--api', 'openai-completions', '--tokenizer', 'approx', '--profile', 'poisson', '--rate', '8',
        '--max-seconds', '1', '--output-tokens', '8', '--prompt-tokens', '32', '--repeat', '3', '--idle-wait', '0', '--out', out, '--no-progress',
      ]);
      expect(res.code, res.stderr).toBe(0);
      // A row mark (~, †) may follow the label on a loaded machine; the cell must still be mean ± half-width.
      expect(res.stdout).toMatch(/\| asynchronous@8\.00 req\/sec[^|]* \| +\d+\.\d\d ± \d+\.\d\d \|/);
      expect(res.stdout).toMatch(/^- ± 95% interval \(Student t, 2 degrees of freedom\) of the mean over 3 runs of each row/m);
      const doc = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { stages: StageSummary[] };
      const row = doc.stages[0] as StageSummary;
      expect(row.repeats).toHaveLength(3);
      const runs = row.repeats as StageSummary[];
      expect(runs.map((r) => r.repeat)).toEqual([0, 1, 2]);
      const rps = row.intervals?.['requestThroughput'];
      expect(rps?.n).toBe(3);
      expect(rps?.values).toEqual(runs.map((r) => r.requestThroughput));
      expect(row.requestThroughput).toBeCloseTo(runs.reduce((a, r) => a + r.requestThroughput, 0) / 3, 10);
      expect(row.requests.total).toBe(runs.reduce((a, r) => a + r.requests.total, 0));
      const records = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
      expect(new Set(records.map((r) => r.repeat))).toEqual(new Set([0, 1, 2]));
      expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
      // Poisson arrivals from seed + repeat: the three runs did not send at the same offsets.
      const firstGaps = [0, 1, 2].map((k) => {
        const sent = records.filter((r) => r.repeat === k).map((r) => r.sentAtMs).sort((a, b) => a - b);
        return Math.round((sent[2] as number) - (sent[1] as number));
      });
      expect(new Set(firstGaps).size).toBeGreaterThan(1);
    } finally {
      await server.close();
    }
  }, 60_000);
});
