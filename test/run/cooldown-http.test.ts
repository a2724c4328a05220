import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOLDOWN_OVER } from '../../src/load/window.js';
import { runCli } from '../helpers/cli.js';
import { readRunFolder } from '../helpers/run-folder.js';

/**
 * Issue 36, item 1, over HTTP against the built-in simulator: after a row's window closes the load stays on until
 * every request measured in it has finished; what that cool-down sends is recorded, flagged and left out of the
 * figures, and what it still has in flight then is cancelled. Asserted: the counts and flags, which hold however
 * busy the machine is.
 */
describe('the cool-down after a row, in a real run', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-cooldown-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('records the cool-down requests as not measured, and counts them apart from the ramp-up', async () => {
    const out = join(tmp, 'run');
    const res = await runCli([
      'run', '--profile', 'constant', '--rate', '10', '--max-seconds', '1', '--prompt-tokens', '128', '--output-tokens', '64',
      '--out', out, '--no-progress', '--format', 'json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    const { doc, records } = readRunFolder(out);
    const row = doc.stages[0];
    if (!row) throw new Error('no row');
    const closeAt = row.window?.toMs as number;
    const measured = records.filter((r) => !r.warmup);
    const cooldown = records.filter((r) => r.cooldown === true);
    const ramp = records.filter((r) => r.warmup && r.cooldown !== true);
    // Each request takes ~0.6 s on the simulator and the row sends one every 0.1 s: the cool-down sends some.
    expect(cooldown.length).toBeGreaterThan(0);
    expect(row.requests.total).toBe(measured.length);
    expect(row.requests.warmup).toBe(ramp.length);
    expect(row.requests.cooldown).toBe(cooldown.length);
    // Cut: the cool-down's leftovers (and any ramp-up request still running), all unmeasured.
    expect(row.requests.cooldownCut).toBe(records.filter((r) => r.warmup && r.status === 'incomplete').length);
    // Sent after the window closed, marked unmeasured; every measured request was sent inside it and finished.
    for (const r of cooldown) {
      expect(r.warmup).toBe(true);
      expect(r.sentAtMs).toBeGreaterThan(closeAt);
    }
    expect(measured.every((r) => r.status === 'ok' && r.sentAtMs <= closeAt)).toBe(true);
    // Cut only once the last measured request had finished, saying so.
    const lastMeasuredEnd = Math.max(...measured.map((r) => r.endAtMs));
    for (const r of records.filter((x) => x.warmup && x.status === 'incomplete')) {
      expect(r.endAtMs).toBeGreaterThanOrEqual(lastMeasuredEnd);
      expect(r.error?.message).toBe(COOLDOWN_OVER);
    }
    // The figures leave the cool-down out: ok/sent counts the measured requests only.
    expect(row.requests.ok).toBe(measured.length);
  }, 120_000);
});
