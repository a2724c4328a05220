import type { RunOptions } from '../config/run-options.js';
import { DEFAULT_EXTEND_FACTOR, DEFAULT_MIN_SAMPLES } from '../load/window.js';

/**
 * The window rules printed under every table and kept in summary.json (`windowRules`). `run` and `predict` use
 * the same rules (load/window.ts), so they print the same text.
 */
export function describeWindowRules(opts: RunOptions): string {
  const grid = opts.profile === 'grid';
  const close =
    opts.maxSeconds !== undefined
      ? `closes ${opts.maxSeconds} s later (kept open up to ${opts.maxSeconds * DEFAULT_EXTEND_FACTOR} s until ${DEFAULT_MIN_SAMPLES} requests were sent in it and it is as long as the mean latency of its own requests)`
      : `closes once ${opts.maxRequests} requests were sent in it`;
  const warm = opts.warmupSeconds ? ` and not before ${opts.warmupSeconds} s (--warmup)` : '';
  const steady =
    `each row is measured over its steady window: it opens once the load has run for one request latency${warm} — ` +
    'when the first request completes (closed loops), when a request sent after the first completion completes (open loops), ' +
    'or one such hop after the in-flight cap was found (throughput rows) ' +
    `(what an open loop or throughput row sent before is ramp-up: saved, left out of the figures; a closed loop's first requests already ran at its N in flight and are measured) and ${close}; ` +
    'throughput = completions inside the window / its length (tokens counted as generated inside it), send rate = sends inside / length; ' +
    'latencies and percentiles over the requests sent inside the window, each followed to its end; ' +
    'throughput rows raise their in-flight cap ×4 from 16 during the ramp while the completion rate still grows 15% a step';
  const gridRule = grid
    ? `grid cells: throughput columns from a burst of ${opts.numPrompts} prompts sent at once (first send → last completion), ` +
      `latency columns from a ${gridLatencyWords(opts)} pass; `
    : '';
  return `window: ${gridRule}${grid ? 'the latency pass: ' : ''}${steady}; percentiles over successful requests, failures shown beside them.`;
}

function gridLatencyWords(opts: RunOptions): string {
  const load = opts.gridLatencyLoad;
  return load.kind === 'rate' ? `${load.requests}-request ${load.rate} req/s` : `${load.requests}-request one-at-a-time`;
}
