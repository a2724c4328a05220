import type { LiveProgress, LiveStatus } from './client/api-types.js';

/**
 * What a running `inferbench run` posts to the dashboard (POST /api/live), at most every 250 ms. Each post carries
 * the whole state, so a post that is lost or late costs nothing: the next one says everything again.
 */
export interface FeedBatch {
  /** Run folder name and absolute path (the dashboard tails its requests.jsonl for points and errors). */
  name: string;
  dir: string;
  pid: number;
  status: LiveStatus;
  exitCode?: number;
  model: string;
  engine: string;
  profile: string;
  plannedStages: number;
  /** Rows finished (each rewrote summary.json). */
  stagesDone: number;
  /** Row index → label, for the rows started so far. */
  stageLabels: Record<number, string>;
  progress?: LiveProgress;
  /** performance.now() in the run process when the first row started: the records' clock origin. */
  clockZeroMs?: number;
  startedAt: string;
}
