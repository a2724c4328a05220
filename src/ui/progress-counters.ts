/** Live counters, bumped on the hot path (plain increments, nothing else); the live feed reads them. */
export interface ProgressCounters {
  dispatched: number;
  done: number;
  errors: number;
}
