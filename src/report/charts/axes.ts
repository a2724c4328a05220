import type { Slo } from '../../metrics/summary.js';
import type { StoredRun } from '../../store/run-store.js';

/**
 * Ticks for a log axis over [min, max]: 1-2-5 steps per decade, denser (1, 1.5, 2, 3, 5, 7) when the data span less
 * than a decade — vega's own log ticks then show one or two labels, which says nothing about the values. The
 * domain runs from the tick at or below min to the tick at or above max, so the first and last ticks frame the data.
 */
export function logTicks(min: number, max: number): { values: number[]; domain: [number, number] } {
  const lo = Math.max(min, Number.MIN_VALUE);
  const hi = Math.max(max, lo);
  const candidates = (mantissas: readonly number[]): number[] => {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)) - 1; e <= Math.ceil(Math.log10(hi)) + 1; e++) {
      for (const m of mantissas) out.push(Number((m * 10 ** e).toPrecision(3)));
    }
    return out;
  };
  const pick = (mantissas: readonly number[]): number[] => {
    const all = candidates(mantissas);
    const below = all.filter((v) => v <= lo).pop() ?? lo;
    const above = all.find((v) => v >= hi) ?? hi;
    return all.filter((v) => v >= below && v <= above);
  };
  let values = pick([1, 2, 5]);
  if (values.length < 4) values = pick([1, 1.5, 2, 3, 5, 7]);
  return { values, domain: [values[0] ?? lo, values[values.length - 1] ?? hi] };
}

/** A y encoding on a log scale with `logTicks` over the values drawn (none drawn: vega's defaults). */
export function logY(field: string, title: string, values: readonly number[]): object {
  const finite = values.filter((v) => Number.isFinite(v) && v > 0);
  if (finite.length === 0) return { field, type: 'quantitative', title, scale: { type: 'log' } };
  const t = logTicks(Math.min(...finite), Math.max(...finite));
  return { field, type: 'quantitative', title, scale: { type: 'log', domain: t.domain, nice: false }, axis: { values: t.values, format: '~g', grid: true } };
}

/** The SLO the runs were measured against: a capacity run's limits, else the --slo a goodput row kept. */
export function runsSlo(runs: readonly StoredRun[]): Slo | undefined {
  for (const r of runs) {
    if (r.summary.capacity) return r.summary.capacity.slo;
    const s = r.summary.stages.find((x) => x.goodput)?.goodput?.slo;
    if (s) return s;
  }
  return undefined;
}

/**
 * A dotted horizontal rule at an SLO limit, labelled at its right end ("SLO 500 ms"). Layers of a chart whose data
 * it shares (a facet's panels cannot take data of their own): one row is kept, so the rule is drawn once.
 */
export function sloRuleLayers(limitMs: number | undefined): object[] {
  if (limitMs === undefined) return [];
  const once = [{ window: [{ op: 'row_number', as: 'sloRow' }], groupby: [] }, { filter: 'datum.sloRow === 1' }];
  const y = { datum: limitMs, type: 'quantitative' };
  return [
    { transform: once, mark: { type: 'rule', color: '#d62728', strokeDash: [4, 3], strokeWidth: 1.5 }, encoding: { y } },
    {
      transform: once,
      mark: { type: 'text', align: 'right', baseline: 'bottom', dy: -3, fontSize: 11, color: '#d62728', x: 'width', text: `SLO ${limitMs} ms` },
      encoding: { y },
    },
  ];
}

/** Vega expression: a bar's value as its label — whole numbers from 100 up, two decimals under. */
export const VALUE_LABEL = "datum.v >= 100 ? format(datum.v, ',.0f') : format(datum.v, '.2f')";
