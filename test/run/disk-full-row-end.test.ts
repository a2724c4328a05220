import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { startFixedDelayServer, type FixedDelayServer } from '../helpers/openai-server.js';
import { readRunFolder } from '../helpers/run-folder.js';
import { runInProcess } from '../helpers/run-in-process.js';

/** Every record a row sends: measured, ramp-up and cool-down. */
const recordsOfRow = (s: StageSummary): number => s.requests.total + s.requests.warmup + (s.requests.cooldown ?? 0);

/** The rows summary.json calls finished (none when the run never wrote it). */
function finishedRows(dir: string): StageSummary[] {
  if (!existsSync(join(dir, 'summary.json'))) return [];
  return readRunFolder(dir).doc.stages.filter((s) => !s.interrupted);
}

/**
 * summary.json was rewritten at a row's end before that row's last records reached requests.jsonl: a full disk at
 * that flush left a row called finished with some of its records cut, and `--resume` kept it. Rows of 4 quick
 * requests end well within the writer's 250 ms batching, so (before the fix) each row's records met the disk only
 * after summary.json called the row finished. The cut is the writer's full-disk test hook, its budget measured from
 * an uncut run of the same rows; in-process against a small server, under a second each.
 */
describe('a full disk at the flush of a row’s last records', () => {
  let tmp: string;
  let server: FixedDelayServer;
  let args: (out: string) => string[];
  /** Bytes of row 0's records, and of one record, in an uncut run. */
  let row0Bytes: number;
  let recordBytes: number;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'ib-row-end-'));
    server = await startFixedDelayServer({ ttftMs: 1, itlMs: 1 });
    args = (out) => ['--target', server.url, '--profile', 'concurrent', '--concurrency', '2,2', '--max-requests', '4', '--prompt-tokens', '16', '--output-tokens', '4', '--tokenizer', 'approx', '--seed', '7', '--no-progress', '--out', out];
    const ref = join(tmp, 'ref');
    const whole = await runInProcess(args(ref));
    expect(whole.code, whole.stderr).toBe(0);
    const lines = readFileSync(join(ref, 'requests.jsonl'), 'utf8').trimEnd().split('\n');
    const row0 = lines.filter((l) => (JSON.parse(l) as RequestRecord).stage === 0);
    expect(row0.length).toBeGreaterThanOrEqual(4);
    row0Bytes = row0.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    recordBytes = row0Bytes / row0.length;
  });
  afterAll(async () => {
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** Resumes `out` and checks the run ends whole: every row, each with all its records, no id twice. */
  async function resumeToTheEnd(out: string): Promise<void> {
    const resumed = await runInProcess(['--resume', out, '--no-progress']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const { doc, records } = readRunFolder(out);
    expect(doc.complete).toBe(true);
    expect(doc.stages.map((s) => s.index)).toEqual([0, 1]);
    for (const s of doc.stages) expect(records.filter((r) => r.stage === s.index)).toHaveLength(recordsOfRow(s));
    const ids = records.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  }

  it('the first row’s records cut: no row is called finished, and --resume runs both rows', async () => {
    const out = join(tmp, 'row0');
    // One and a half records reach the file: row 0 keeps one whole record of its five (4 measured, 1 cool-down).
    const cut = await runInProcess(args(out), { INFERBENCH_TEST_DISK_FULL_AFTER: String(Math.round(recordBytes * 1.5)) });
    expect(cut.code, cut.stderr).toBe(1);
    expect(cut.stderr).toMatch(/requests\.jsonl: the disk is full \(ENOSPC\): the run stopped — no row had finished, .*--resume/);
    // Before the fix: both rows finished, row 0 with 1 record of 5 (and --resume had nothing left to run).
    expect(finishedRows(out)).toEqual([]);
    await resumeToTheEnd(out);
  }, 60_000);

  it('the last row’s records cut: only the first row is called finished, and --resume runs the last', async () => {
    const out = join(tmp, 'row1');
    // Row 0 whole, then one and a half records of row 1.
    const cut = await runInProcess(args(out), { INFERBENCH_TEST_DISK_FULL_AFTER: String(Math.round(row0Bytes + recordBytes * 1.5)) });
    expect(cut.code, cut.stderr).toBe(1);
    // Before the fix the cut came at the close, after the run: "every row was measured … then run again".
    expect(cut.stderr).toMatch(/requests\.jsonl: the disk is full \(ENOSPC\): the run stopped — summary\.json keeps the 1 finished row, .*--resume/);
    // Before the fix: both rows finished, row 1 with 1 record of 5.
    const kept = finishedRows(out);
    expect(kept.map((s) => s.index)).toEqual([0]);
    const { records } = readRunFolder(out);
    expect(records.filter((r) => r.stage === 0)).toHaveLength(recordsOfRow(kept[0] as StageSummary));
    await resumeToTheEnd(out);
  }, 60_000);
});
