/**
 * CLOCK_MONOTONIC (process.hrtime) minus performance.now(), in ms: the same for every process on a host up
 * to sampling error, so adding it maps one process's performance.now() onto the shared monotonic clock.
 * Best of many brackets, so a preemption between the two reads does not skew it.
 */
export function monotonicOffsetMs(samples = 200): number {
  let best = Infinity;
  let offset = 0;
  for (let i = 0; i < samples; i++) {
    const a = performance.now();
    const h = Number(process.hrtime.bigint()) / 1e6;
    const b = performance.now();
    if (b - a < best) {
      best = b - a;
      offset = h - (a + b) / 2;
    }
  }
  return offset;
}
