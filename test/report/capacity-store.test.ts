import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openRunDir } from '../../src/store/run-store.js';
import { runCli } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'ib-capacity-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a saved capacity run, read back by report/compare', () => {
  it('keeps its capacity answer and each probe row’s attainment and over-saturation', async () => {
    const out = join(root, 'run');
    const r = await runCli(['predict', '--profile', 'capacity', '--slo', 'ttft:300', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const raw = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      capacity: unknown;
      stages: { sloAttainment?: unknown; overSaturated?: string }[];
    };
    const read = openRunDir(out).summary;
    expect(read.capacity).toEqual(raw.capacity);
    expect(read.stages.map((s) => s.sloAttainment)).toEqual(raw.stages.map((s) => s.sloAttainment));
    expect(read.stages.map((s) => s.overSaturated)).toEqual(raw.stages.map((s) => s.overSaturated));
    // The default search on the simulator ends past capacity: at least one probe row was stopped over-saturated.
    expect(read.stages.some((s) => s.overSaturated !== undefined)).toBe(true);
    expect(read.stages.every((s) => s.sloAttainment !== undefined)).toBe(true);
  });
});
