import { describe, expect, it } from 'vitest';
import { Progress } from '../../src/cli/progress.js';
import { plannedStageCount, stageNumberText } from '../../src/load/profiles.js';
import type { StageSpec } from '../../src/load/types.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { createFixedLengthWorkload } from '../../src/workload/synthetic.js';

/** A stream that keeps what is written to it (not a TTY: plain lines). */
function sink(): NodeJS.WriteStream & { text: string } {
  const s = { text: '', isTTY: false, write(chunk: string) { s.text += chunk; return true; } };
  return s as unknown as NodeJS.WriteStream & { text: string };
}

const row = (label: string): StageSummary =>
  ({ label, requests: { ok: 20, total: 20, errors: 0, incomplete: 0 }, durationS: 5.2, requestThroughput: 3.85, outputTokenThroughput: 492.8, metrics: { ttftMs: { mean: 40 }, itlMs: { mean: 10 } } }) as unknown as StageSummary;

describe('progress lines (issue 51, real-engine finding 9)', () => {
  it("a capacity search's probes are counted without a total: [probe 3], not [3/3]", () => {
    const workload = createFixedLengthWorkload(128, 64);
    expect(plannedStageCount({ profile: 'capacity', limits: { maxSeconds: 5 }, workload })).toBe(0);
    expect(stageNumberText(2, 0)).toBe('probe 3');
    // Profiles that know their rows keep "3/11" (and never print fewer than the rows run so far).
    expect(stageNumberText(2, 11)).toBe('3/11');
    expect(stageNumberText(11, 11)).toBe('12/12');

    const out = sink();
    const progress = new Progress(out, true, 0);
    progress.stageStarted({ label: 'concurrent@4' } as StageSpec, 2);
    progress.stageEnded(row('concurrent@4'));
    progress.stop();
    expect(out.text).toMatch(/^\[probe 3\] concurrent@4: 20\/20 ok in 5\.2 s — /m);
    expect(out.text).not.toContain('[3/3]');
  });
});
