import { walkMeasuredRecords, type RecordTally } from '../store/requests-reader.js';
import { Reservoir } from '../store/reservoir.js';

/** Values kept per distribution and points kept for the TTFT-over-time scatter (browsers draw a few thousand marks well). */
export const HISTOGRAM_LIMIT = 2000;
export const SCATTER_LIMIT = 3000;

export interface RequestPoints extends RecordTally {
  ttftMs: number[];
  itlMs: number[];
  e2eMs: number[];
  /** Successful measured requests: send time (run clock, ms), TTFT (ms) and row index. */
  points: { sentAtMs: number; ttftMs: number; stage: number }[];
  sampled: boolean;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * One streaming pass over requests.jsonl (runs can hold millions of records with their chunk gaps): seeded
 * samples for the histograms and the scatter, failure counts by message. Warm-up requests are left out, as in
 * every table.
 */
export async function readRequestPoints(dir: string): Promise<RequestPoints> {
  const ttft = new Reservoir<number>(HISTOGRAM_LIMIT);
  const itl = new Reservoir<number>(HISTOGRAM_LIMIT);
  const e2e = new Reservoir<number>(HISTOGRAM_LIMIT);
  const scatter = new Reservoir<RequestPoints['points'][number]>(SCATTER_LIMIT);
  const tally = await walkMeasuredRecords(dir, (r) => {
    if (finite(r['ttftMs'])) {
      ttft.offer(r['ttftMs']);
      if (finite(r['sentAtMs'])) scatter.offer({ sentAtMs: r['sentAtMs'], ttftMs: r['ttftMs'], stage: finite(r['stage']) ? r['stage'] : 0 });
    }
    if (finite(r['itlMs'])) itl.offer(r['itlMs']);
    if (finite(r['e2eMs'])) e2e.offer(r['e2eMs']);
  });
  return {
    ...tally,
    ttftMs: ttft.items,
    itlMs: itl.items,
    e2eMs: e2e.items,
    points: scatter.items,
    sampled: ttft.sampled || itl.sampled || e2e.sampled || scatter.sampled,
  };
}

