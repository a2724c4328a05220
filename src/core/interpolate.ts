/** Value at `x` of the piecewise-linear series through (xs[i], ys[i]), xs ascending; flat outside its points. */
export function interpolate(xs: readonly number[], ys: readonly number[], x: number): number {
  const n = xs.length;
  if (x <= (xs[0] as number)) return ys[0] as number;
  if (x >= (xs[n - 1] as number)) return ys[n - 1] as number;
  let lo = 0;
  let hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as number) <= x) lo = mid;
    else hi = mid;
  }
  const xa = xs[lo] as number;
  const xb = xs[hi] as number;
  return xb > xa ? (ys[lo] as number) + (((ys[hi] as number) - (ys[lo] as number)) * (x - xa)) / (xb - xa) : (ys[hi] as number);
}
