/** Flags of the window section: how long and how each row is measured, and how long it may run on. */
import { seconds, wholeNumber } from './parsers.js';
import { flag, type FlagCommand } from './spec.js';

/**
 * Seconds each row is measured for when nothing else bounds it, after its ramp-up (load/window.ts). `run` and
 * `predict` use the same rules, so a prediction and a measurement of one setup compare like with like.
 */
export const DEFAULT_STAGE_SECONDS = 5;
/** `--stall-timeout`'s default: a row with requests open, none finished and no reply bytes this long stops (a silent server). */
export const DEFAULT_STALL_SECONDS = 30;
/** `--drain`'s default: measured requests may take this long to finish after their row's window closed. */
export const DEFAULT_DRAIN_SECONDS = 30;
/** `--idle-wait`'s default: before each row, wait at most this long for an idle server. */
export const DEFAULT_IDLE_WAIT_SECONDS = 60;

const RUN_PREDICT: readonly FlagCommand[] = ['run', 'predict'];
const RUN: readonly FlagCommand[] = ['run'];

export const WINDOW_FLAGS = [
  flag({ name: 'max-requests', arg: 'n', section: 'window', group: 'limits', commands: RUN_PREDICT,
    help: 'measure N requests per row (after its ramp-up)', parse: wholeNumber() }),
  flag({ name: 'max-seconds', arg: 'time', section: 'window', group: 'limits', commands: RUN_PREDICT, shown: `${DEFAULT_STAGE_SECONDS}s without --max-requests`,
    help: 'measure each row this long after its ramp-up: 30 (seconds), 90s, 5m, 1h', parse: seconds({ positive: true }) }),
  flag({ name: 'steady-state', section: 'window', group: 'limits', commands: RUN_PREDICT,
    help: 'also report each row over the stretch where requests in flight held steady (within 20% of their median)' }),
  flag({ name: 'repeat', arg: 'n', section: 'window', group: 'limits', commands: RUN_PREDICT, shown: '1',
    help: 'run every row N times: the table shows mean ± 95% interval (Student t) of its main figures', parse: wholeNumber() }),
  flag({ name: 'warmup', arg: 'time', section: 'window', group: 'limits', commands: RUN_PREDICT, shown: '0: only the ramp-up is left out',
    help: "also leave out the requests sent in each row's first <time>: 10s, 30 (seconds), 1m", parse: seconds({ min: 0 }) }),

  flag({ name: 'drain', arg: 'time', section: 'window', group: 'limits', commands: RUN, value: String(DEFAULT_DRAIN_SECONDS), shown: `${DEFAULT_DRAIN_SECONDS}s`,
    help: "after a row's window, how long its measured requests may take to finish (the load stays on meanwhile)", parse: seconds({ min: 0 }) }),
  flag({ name: 'stall-timeout', arg: 'time', section: 'window', group: 'limits', commands: RUN, value: String(DEFAULT_STALL_SECONDS), shown: `${DEFAULT_STALL_SECONDS}s`,
    help: 'stop a row when requests are open and the server sent nothing (no request finished, no streamed bytes) for this long (at least 10× the synchronous latency once known); the run stops if nothing ever finished',
    parse: seconds({ positive: true }) }),
  flag({ name: 'idle-wait', arg: 'time', section: 'window', group: 'limits', commands: RUN, value: String(DEFAULT_IDLE_WAIT_SECONDS), shown: `${DEFAULT_IDLE_WAIT_SECONDS}s`,
    help: 'before each row, wait this long at most for an idle server (0 = do not)', parse: seconds({ min: 0 }) }),
] as const;
