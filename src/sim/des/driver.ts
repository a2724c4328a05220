/** What the engine needs from a clock: the current time and a way to run something later. */
export interface SimDriver {
  /** Current time in ms on the driver's clock. */
  now(): number;
  /** Run `fn` at `atMs` (clamped to now); events at equal times run in scheduling order. */
  schedule(atMs: number, fn: () => void): void;
}
