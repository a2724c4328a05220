/**
 * The fewest of something (replicas behind a router, copies of a prefill/decode split) that meets the SLO, where more
 * never holds less: from `start`, bisected down to 1 when `start` meets it, else tried upwards up to `extra` more.
 * Each count is run once (memoized); `tried` keeps every trial by count.
 */
export async function fewestMeeting<T extends { meetsSlo: boolean }>(
  start: number, extra: number, run: (n: number) => Promise<T>,
): Promise<{ best: T | undefined; tried: Map<number, T> }> {
  const tried = new Map<number, T>();
  const at = async (n: number): Promise<T> => {
    let t = tried.get(n);
    if (!t) tried.set(n, (t = await run(n)));
    return t;
  };
  if ((await at(start)).meetsSlo) {
    // Invariant: `hi` meets the SLO, every count ≤ `lo` is taken to miss.
    let lo = 0;
    let hi = start;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await at(mid)).meetsSlo) hi = mid;
      else lo = mid;
    }
    return { best: await at(hi), tried };
  }
  for (let n = start + 1; n <= start + extra; n++) {
    const t = await at(n);
    if (t.meetsSlo) return { best: t, tried };
  }
  return { best: undefined, tried };
}
