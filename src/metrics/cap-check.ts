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

/**
 * A throughput row whose kept cap queued at the server: the search went down to what the server served at once and
 * lost rate there, so it kept the queued cap (or ran out of ramp first). Its throughput is the server's, but its time
 * to first token and latency include the wait of the requests beyond the server's slots.
 */
export function capQueue(search: CapSearch | undefined): string | undefined {
  if (!search) return undefined;
  const kept = [...search.steps].reverse().find((x) => x.cap === search.cap);
  const serving = kept?.servingAtOnce;
  if (!kept?.queued || serving === undefined || serving >= kept.cap) return undefined;
  return `its ${kept.cap} in flight queued at the server, which served ${serving} at once (${serving} in flight lost throughput): time to first token and latency include the wait of the other ${kept.cap - serving}`;
}
