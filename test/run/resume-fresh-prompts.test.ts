import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResumeState } from '../../src/cli/resume.js';
import { RESUME_PART_ID_STRIDE } from '../../src/load/benchmark.js';
import { readRunFolder } from '../helpers/run-folder.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { startSlotServer } from '../helpers/slot-server.js';

/**
 * Issue 51 item 2: `--resume` ran the cut row again with the ids — so the prompts — of its first attempt, and a
 * server with a prefix cache answered them from its cache (TTFT too low, then a warning blaming --seed). A resumed
 * part must send ids and prompts no earlier part sent. Run in-process: the cut is the writer's full-disk test hook.
 */
describe('--resume sends prompts no earlier part of the run sent', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'ib-resume-fresh-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('a row cut by a full disk runs again with new ids and prompts: the prefix-caching server sees no prompt twice', async () => {
    // Answers a prompt whose start it has seen from its cache, and says so (cached_tokens), as llama.cpp and vLLM do.
    // Requests of ~80 ms: row 1 (2 streams, ~1.2 s) still runs when its first records (flushed every 250 ms) meet the full disk.
    const server = await startSlotServer({ slots: 4, prefillMs: 20, tokenMs: 20 });
    const out = join(tmp, 'cut');
    const args = ['--target', server.url, '--profile', 'concurrent', '--concurrency', '4,2', '--max-requests', '30', '--prompt-tokens', '32', '--output-tokens', '4', '--tokenizer', 'approx', '--seed', '81', '--no-progress', '--out', out];
    try {
      // Row 0's 30 records (about 0.8 KB each) fit; row 1 fills the "disk" about a third of the way.
      const cut = await runInProcess(args, { INFERBENCH_TEST_DISK_FULL_AFTER: '32000' });
      expect(cut.code, cut.stderr).toBe(1);
      expect(cut.stderr).toMatch(/the disk is full/);
      const first = readRunFolder(out);
      expect(first.doc.stages.filter((s) => !s.interrupted)).toHaveLength(1);
      const cutRowIds = first.records.filter((r) => r.stage === 1).map((r) => r.id);
      expect(cutRowIds.length).toBeGreaterThan(0);
      const sentBefore = server.stats.received;
      expect(server.stats.cacheHits).toBe(0);

      const resumed = await runInProcess(['--resume', out, '--no-progress']);
      expect(resumed.code, resumed.stdout).toBe(0);
      expect(resumed.stdout).toMatch(/resuming concurrent profile at row 2/);
      const after = readRunFolder(out);
      expect(after.doc.stages).toHaveLength(2);
      expect(server.stats.received - sentBefore).toBeGreaterThanOrEqual(30);
      // Before the fix: the cut row's first attempt had sent ids 1,000,000… and the resumed row sent them again.
      expect(server.stats.cacheHits).toBe(0);
      expect(after.doc.stages[1]?.unintendedCache).toBeUndefined();
      expect(resumed.stdout).not.toMatch(/prefix cache/);
      const row1 = after.records.filter((r) => r.stage === 1);
      expect(row1.length).toBeGreaterThanOrEqual(30);
      expect(row1.every((r) => r.id >= RESUME_PART_ID_STRIDE + 1_000_000 && r.id < RESUME_PART_ID_STRIDE + 2_000_000)).toBe(true);
      expect(row1.some((r) => cutRowIds.includes(r.id))).toBe(false);
      const ids = after.records.map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { resumes?: Array<{ fromRow: number; idBase: number; droppedRequests: number }> };
      expect(manifest.resumes).toEqual([expect.objectContaining({ fromRow: 1, idBase: RESUME_PART_ID_STRIDE, droppedRequests: cutRowIds.length })]);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('each resume of a folder gets the next id space; the same folder as it was gives the same one; --dry-run changes nothing', () => {
    const dir = join(tmp, 'parts');
    cpSync(join(tmp, 'cut'), dir, { recursive: true });
    // As if the resumed part had been cut too, in its second row, after 3 records.
    const summaryPath = join(dir, 'summary.json');
    const summary = JSON.parse(readFileSync(summaryPath, 'utf8')) as { complete: boolean; stages: Array<{ interrupted?: boolean }> };
    writeFileSync(summaryPath, JSON.stringify({ ...summary, complete: false, stages: [summary.stages[0], { ...summary.stages[1], interrupted: true }] }));
    const requestsPath = join(dir, 'requests.jsonl');
    const lines = readFileSync(requestsPath, 'utf8').trim().split('\n');
    const keptRow0 = lines.filter((l) => (JSON.parse(l) as { stage: number }).stage === 0);
    writeFileSync(requestsPath, `${[...keptRow0, ...lines.filter((l) => (JSON.parse(l) as { stage: number }).stage === 1).slice(0, 3)].join('\n')}\n`);
    const manifestBefore = readFileSync(join(dir, 'manifest.json'), 'utf8');

    const copy = join(tmp, 'parts-copy');
    cpSync(dir, copy, { recursive: true });
    const a = loadResumeState(dir);
    const b = loadResumeState(copy);
    expect(a.idBase).toBe(2 * RESUME_PART_ID_STRIDE);
    expect(b.idBase).toBe(a.idBase);
    // Nothing is written until the part begins (a --dry-run never does).
    expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).toBe(manifestBefore);
    // A dataset continues after the kept rows and after every cut attempt's requests (the server saw those prompts).
    const droppedFirst = (JSON.parse(manifestBefore) as { resumes: Array<{ droppedRequests: number }> }).resumes[0]?.droppedRequests ?? 0;
    expect(a.requestsSent).toBe(keptRow0.length + droppedFirst + 3);
    a.begin();
    expect(readFileSync(requestsPath, 'utf8').trim().split('\n')).toHaveLength(keptRow0.length);
    expect(loadResumeState(dir).idBase).toBe(3 * RESUME_PART_ID_STRIDE);
  });
});
