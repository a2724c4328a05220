/** Flags of the load section: the profile and its rows, grid cells, and the SLO and capacity search. */
import { CAPACITY_DEFAULTS } from '../../load/capacity.js';
import { PROFILE_NAMES } from '../../load/profiles.js';
import { parseGridLatencyLoad, parseRateList, parseSlo } from '../parse.js';
import { choice, numberList, number, wholeNumber } from './parsers.js';
import { flag, type FlagCommand } from './spec.js';

const RUN_PREDICT: readonly FlagCommand[] = ['run', 'predict'];
const ARRIVALS = ['constant', 'poisson', 'gamma'] as const;

export const LOAD_FLAGS = [
  flag({ name: 'profile', arg: 'name', section: 'load', group: 'load', commands: RUN_PREDICT, value: 'sweep', explicit: true,
    help: PROFILE_NAMES.join(' | '), parse: choice(PROFILE_NAMES) }),
  flag({ name: 'rate', arg: 'r,...', section: 'load', group: 'load', commands: RUN_PREDICT,
    help: 'constant/poisson: requests per second, one row each; inf = the row sends all its requests at once (--max-requests, else --num-prompts)',
    parse: (raw, p, name) => parseRateList(name, raw, p) }),
  flag({ name: 'concurrency', arg: 'n,...', section: 'load', group: 'load', commands: RUN_PREDICT,
    help: 'concurrent: streams, one row each', parse: numberList({ integer: true, positive: true }) }),
  flag({ name: 'sweep-rates', arg: 'n', section: 'load', group: 'load', commands: RUN_PREDICT, value: '9', explicit: true,
    help: 'sweep: rates between its synchronous and throughput rows', parse: wholeNumber() }),
  flag({ name: 'arrival', arg: 'kind', section: 'load', group: 'load', commands: RUN_PREDICT, value: 'constant', choices: ARRIVALS, explicit: true,
    help: 'arrivals of sweep/capacity rate rows: constant | poisson | gamma', parse: choice(ARRIVALS) }),
  flag({ name: 'burstiness', arg: 'k', section: 'load', group: 'load', commands: RUN_PREDICT,
    help: 'gamma arrivals: shape (1 = Poisson, lower = burstier)', parse: number({ positive: true }) }),
  flag({ name: 'max-concurrency', arg: 'n', section: 'load', group: 'load', commands: RUN_PREDICT, shown: 'none',
    help: 'client-side cap on requests in flight (queueing is measured)', parse: wholeNumber() }),
  flag({ name: 'input-lens', arg: 'n,...', section: 'load', group: 'load', commands: RUN_PREDICT,
    help: 'grid: prompt lengths', parse: numberList({ integer: true, positive: true }) }),
  flag({ name: 'output-lens', arg: 'n,...', section: 'load', group: 'load', commands: RUN_PREDICT,
    help: 'grid: output lengths', parse: numberList({ integer: true, positive: true }) }),
  flag({ name: 'num-prompts', arg: 'n', section: 'load', group: 'load', commands: RUN_PREDICT, value: '100', explicit: true,
    help: 'requests sent at once: per grid cell, and by a --rate inf row', parse: wholeNumber() }),
  flag({ name: 'grid-latency-load', arg: 'load', section: 'load', group: 'load', commands: RUN_PREDICT, shown: 'synchronous,10',
    help: 'grid latency columns: synchronous or rate:R, then optionally ,N requests', parse: (raw, p) => parseGridLatencyLoad(raw, p) }),

  flag({ name: 'slo', arg: 'spec', section: 'load', group: 'slo', commands: RUN_PREDICT,
    help: 'limits in ms for goodput (capacity: per request), e.g. ttft:500,itl:50,e2e:10000', parse: (raw, p) => parseSlo(raw, p) }),
  // The capacity search's own flags are read by config/capacity-options.ts (plan shares it).
  flag({ name: 'slo-attainment', arg: 'pct', section: 'load', group: 'slo', commands: RUN_PREDICT, shown: String(CAPACITY_DEFAULTS.attainment),
    help: 'capacity: percent of requests that must meet --slo' }),
  flag({ name: 'max-error-share', arg: 'pct', section: 'load', group: 'slo', commands: RUN_PREDICT, shown: String(CAPACITY_DEFAULTS.maxErrorShare * 100),
    help: 'capacity: most failed requests a passing probe may have, percent' }),
  flag({ name: 'capacity-axis', arg: 'axis', section: 'load', group: 'slo', commands: RUN_PREDICT, shown: CAPACITY_DEFAULTS.axis,
    help: 'capacity: rate (open loop, --arrival) | concurrency (N streams)' }),
  flag({ name: 'capacity-precision', arg: 'pct', section: 'load', group: 'slo', commands: RUN_PREDICT, shown: String(CAPACITY_DEFAULTS.precision * 100),
    help: 'capacity, rate axis: stop when pass and fail are this close, percent' }),
  flag({ name: 'capacity-repeats', arg: 'n', section: 'load', group: 'slo', commands: RUN_PREDICT, shown: String(CAPACITY_DEFAULTS.repeats),
    help: 'capacity: most runs of a load whose attainment is within noise' }),
] as const;
