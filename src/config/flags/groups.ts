/**
 * Help group headings, in the order --help prints them. The same heading means the same kind of flag in every
 * command. Declared here, beside the flag table (./table.ts), which names a group for every flag; cli/help-format.ts
 * re-exports them for the commands whose flags are not in the table yet.
 */
export const GROUP = {
  target: 'Target:',
  /** Several replicas, routers and session affinity (issue 34). */
  replicas: 'Replicas and routers:',
  filters: 'Filters:',
  /** `compare`: what makes two runs comparable. */
  matching: 'Matching runs:',
  load: 'Load:',
  workload: 'Workload:',
  sources: 'Datasets, traces, prefixes, turns:',
  limits: 'Limits:',
  slo: 'SLO and capacity:',
  scale: 'Scaling out:',
  /** `--power`, `--power-gpus`: GPU power over each row's window (issue 33). */
  power: 'Power and energy:',
  search: 'Search space:',
  prices: 'Prices:',
  /** `gate` and `run --gate-against`: thresholds and CI outputs. */
  gate: 'Gate:',
  outputs: 'Outputs:',
  timeouts: 'Timeouts:',
  metadata: 'Metadata:',
  simulator: 'Simulator:',
  /** `sim`'s engine features: prefix caching, reasoning, speculative decoding. */
  simFeatures: 'Engine features:',
  /** `run`'s flags for the simulated engine it starts when there is no --target. */
  embedded: 'Simulator (without --target):',
  calibration: 'Calibration:',
  /** `plan --verify`: launch the top candidates and measure them. */
  verify: 'Verify by measuring:',
  server: 'Server:',
  faults: 'Faults and noise:',
} as const;

export type HelpGroup = keyof typeof GROUP;
