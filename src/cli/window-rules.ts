import type { RunOptions } from '../config/run-options.js';
import { ADAPTIVE_CAP } from '../load/profiles.js';
import { DEFAULT_EXTEND_FACTOR, DEFAULT_MIN_SAMPLES, MAX_WINDOW_MS, SAMPLE_WINDOW_MAX_MS } from '../load/window.js';
import { percent } from './window-rules-doc.js';

const RATES =
  'throughput = completions inside the window / its length (tokens counted as generated inside it), send rate = sends inside / length; ' +
  'latencies over the requests sent inside the window, each followed to its end';
const COOLDOWN =
  'after the window the load stays on (the same arrivals, streams or cap; an unmeasured cool-down, saved with "cooldown": true) ' +
  'until every request measured in it has finished, then what is left is cancelled, so its last requests never finish on a draining server';
const TAIL = 'percentiles over successful requests, failures shown beside them.';

/**
 * The window rules printed under every table and kept in summary.json (`windowRules`). `run` and `predict` use
 * the same rules (load/window.ts), so they print the same text; every figure in it is the code's own constant
 * (docs/metrics.md states the same rules from the same constants: window-rules-doc.ts).
 */
export function describeWindowRules(opts: RunOptions): string {
  if (opts.profile === 'replay') return `window: the trace's requests, measured whole (first send → last completion); ${TAIL}`;
  const unit = opts.workload.turns ? 'conversations' : 'requests';
  if (opts.profile === 'grid') {
    const load = opts.gridLatencyLoad;
    const pass =
      load.kind === 'rate'
        ? `${load.requests} requests at ${load.rate} req/s, measured from when a request sent after the first completion completes`
        : `${load.requests} requests one at a time, all measured`;
    return (
      `window: grid cells: throughput columns from a burst of ${opts.numPrompts} prompts sent at once (first send → last completion); ` +
      `latency columns (per token, per output token, TTFT, ITL) from a low-load pass of ${pass}; ${TAIL}`
    );
  }
  const close = opts.maxSeconds !== undefined ? timeLimitedClose(opts, opts.maxSeconds, unit) : `closes once ${opts.maxRequests} ${unit} were sent in it`;
  const warm = opts.warmupSeconds ? ` and not before ${opts.warmupSeconds} s (--warmup)` : '';
  return (
    `window: each row is measured over its steady window: it opens once the load has run for one request latency${warm} — ` +
    'when the first request completes (closed loops), when a request sent after the first completion completes (open loops), ' +
    `or after the in-flight cap was found (throughput rows: cap ×${ADAPTIVE_CAP.growth} from ${ADAPTIVE_CAP.start} while the completion rate still grows ${percent(ADAPTIVE_CAP.minGain)}, ` +
    'down to what the server serves at once where requests queue there) — ' +
    "(what an open loop or throughput row sent before is ramp-up: saved, left out of the figures; a closed loop's first requests already ran at its N in flight and are measured) " +
    `and ${close}; ${COOLDOWN}${allAtOnce(opts)}; ${RATES}; ${TAIL}`
  );
}

/** How a time-limited window closes; a sweep's rows are sized to hold their requests (load/profiles.ts). */
function timeLimitedClose(opts: RunOptions, seconds: number, unit: string): string {
  const stretched = seconds * DEFAULT_EXTEND_FACTOR;
  const sized =
    opts.profile === 'sweep'
      ? `; a sweep's rows are kept open past ${stretched} s for their ${DEFAULT_MIN_SAMPLES} ${unit} as long as these take at the rate the row sends (a quarter more), up to ${SAMPLE_WINDOW_MAX_MS / 1000} s, unless they would take longer than that`
      : '';
  return (
    `closes on the first completion ${seconds} s later (kept open up to ${stretched} s until ${DEFAULT_MIN_SAMPLES} ${unit} were sent in it and it is as long as ` +
    `the mean latency of its own requests, and past that until one of its own requests has completed, up to ${MAX_WINDOW_MS / 60_000} min${sized})`
  );
}

/**
 * The one line `run` and `predict` print under their table: what the window is, in a sentence. The full rules
 * stay in summary.json (`windowRules`) and docs/metrics.md.
 */
export function shortWindowRules(opts: RunOptions): string {
  const more = 'full rules: summary.json windowRules, docs/metrics.md';
  if (opts.profile === 'replay') return `window: the whole trace, first send → last completion; ${more}`;
  if (opts.profile === 'grid') {
    const load = opts.gridLatencyLoad;
    const pass = load.kind === 'rate' ? `${load.requests} requests at ${load.rate} req/s` : `${load.requests} requests one at a time`;
    return `window: throughput columns from a burst of ${opts.numPrompts} prompts sent at once; latency columns (per token, per output token, TTFT, ITL) from a low-load pass of ${pass}; ${more}`;
  }
  const unit = opts.workload.turns ? 'conversations' : 'requests';
  // A sweep's windows are held open for their requests (load/profiles.ts).
  const held = opts.profile === 'sweep' ? `, held open for ${DEFAULT_MIN_SAMPLES} ${unit} up to ${SAMPLE_WINDOW_MAX_MS / 1000} s` : '';
  const length = opts.maxSeconds !== undefined ? `≥ ${opts.maxSeconds} s${held}, closed on a completion` : `${opts.maxRequests} ${unit}`;
  return `window: each row's steady window (ramp-up left out, ${length})${allAtOnce(opts)}; percentiles over successful requests; ${more}`;
}

/** A `--rate inf` row has no steady window: its burst is measured whole, as a grid cell's is. */
function allAtOnce(opts: RunOptions): string {
  if (!opts.rates?.includes(Number.POSITIVE_INFINITY)) return '';
  return `; the --rate inf row: ${opts.maxRequests ?? opts.numPrompts} requests sent at once, measured whole (first send → last completion)`;
}
