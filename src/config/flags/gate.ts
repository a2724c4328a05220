/**
 * Flags of `inferbench gate` (statistical regression gate over saved runs, gate/) and of `run --gate-against`, which
 * runs then gates in one step. The rows `run` shares are in RUN_FLAG_TABLE (section outputs: what the run prints and
 * writes once measured); the rest, `gate`'s own, in GATE_FLAG_TABLE.
 */
import { DEFAULT_MAX_REGRESSION } from '../../gate/thresholds.js';
import { wholeNumber } from './parsers.js';
import { flag, type FlagCommand, type FlagSpec } from './spec.js';

const RUN: readonly FlagCommand[] = ['run'];
const RUN_GATE: readonly FlagCommand[] = ['run', 'gate'];
const GATE: readonly FlagCommand[] = ['gate'];

export const GATE_RUN_FLAGS = [
  flag({ name: 'gate-against', arg: 'runs', section: 'outputs', group: 'gate', commands: RUN,
    help: 'after the run, gate it against these saved runs (RUN[,RUN…], repeats of the baseline) as `inferbench gate` does; exit 0 pass, 1 fail, 3 inconclusive' }),
  flag({ name: 'max-regression', arg: 'spec', section: 'outputs', group: 'gate', commands: RUN_GATE, shown: DEFAULT_MAX_REGRESSION,
    help: 'largest tolerated change per metric: METRIC=±N% overrides or adds to the defaults (e.g. ttft.p99=+20%,itl.p50=+3%; METRIC=off drops one); latencies ttft|itl|e2e .mean|p50|p90|p95|p99, output_tps, rps, capacity, errors (+N points)' }),
  flag({ name: 'inconclusive', arg: 'as', section: 'outputs', group: 'gate', commands: RUN_GATE, choices: ['pass', 'fail'], shown: 'exit 3',
    help: 'how an inconclusive gate exits: pass (0) or fail (1)' }),
  flag({ name: 'markdown', arg: 'file', section: 'outputs', group: 'gate', commands: RUN_GATE,
    help: "the gate's verdict line and table as Markdown (append to $GITHUB_STEP_SUMMARY)" }),
  flag({ name: 'junit', arg: 'file', section: 'outputs', group: 'gate', commands: RUN_GATE,
    help: 'the gate as JUnit XML: one test case per metric × row, a failure per regression' }),
] as const;

export const GATE_FLAG_TABLE: readonly FlagSpec[] = [
  flag({ name: 'baseline', arg: 'runs', group: 'gate', commands: GATE, help: 'baseline runs: RUN[,RUN…] (run ids, folders, matrix cells or imported runs; several = repeats)' }),
  flag({ name: 'candidate', arg: 'runs', group: 'gate', commands: GATE, help: 'candidate runs: RUN[,RUN…], compared row by row at the same load' }),
  flag({ name: 'allow-mismatch', group: 'matching', commands: GATE, help: 'gate runs of different models, workloads, profiles or window rules anyway (refused otherwise; a WARNING is printed)' }),
  flag({ name: 'seed', arg: 'n', group: 'gate', commands: GATE, shown: 'from the run ids', help: "the bootstrap's seed (the same runs and seed give the same intervals)", parse: wholeNumber({ min: 0 }) }),
  flag({ name: 'results', arg: 'dir', group: 'outputs', commands: GATE, value: 'inferbench-results', help: 'results directory to look run ids up in' }),
  flag({ name: 'json', group: 'outputs', commands: GATE, help: 'print the gate report (checks, intervals, verdict) as JSON on stdout and nothing else there' }),
];
