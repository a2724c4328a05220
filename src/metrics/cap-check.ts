import type { CapSearch } from '../results/stage.js';

/**
 * Whether a throughput row's window held the in-flight cap its search kept. The figures describe what the window
 * measured, so a row whose window held a deeper queue (or fewer requests) than its cap must not be read as the cap's.
 * Allowed: one request or 10% of the cap below it on average (completions free a slot an instant before the next
 * send); never more than the cap at once.
 */
export function capMismatch(search: CapSearch | undefined): string | undefined {
  const m = search?.measuredInFlight;
  if (!search || !m) return undefined;
  const below = search.cap - m.mean > Math.max(1, 0.1 * search.cap);
  if (m.max <= search.cap && !below) return undefined;
  return `the window held ${m.mean.toFixed(1)} requests in flight on average (at most ${m.max}), not the ${search.cap} its cap search kept: its figures describe that load`;
}
