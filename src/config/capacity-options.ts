import { CAPACITY_DEFAULTS } from '../load/capacity.js';
import type { CapacitySettings } from '../load/capacity-types.js';
import type { ArrivalKind } from '../load/types.js';
import type { Slo } from '../metrics/summary.js';
import { parseChoice, parseNumber, type Problems } from './parse.js';

/** The flags that shape the capacity search (and `plan`, which runs one per candidate). */
export interface RawCapacityFlags {
  sloAttainment?: string;
  maxErrorShare?: string;
  capacityAxis?: string;
  capacityPrecision?: string;
  capacityRepeats?: string;
}

/** "5", "5%" → 5 (percent); anything else is a problem naming the flag. */
function parsePercent(flag: string, raw: string | undefined, p: Problems, range: { min: number; max: number }): number | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim().replace(/%$/, '');
  const v = Number(text);
  if (text === '' || !Number.isFinite(v) || v < range.min || v > range.max) {
    p.push(`${flag} ${JSON.stringify(raw)} is not a percentage between ${range.min} and ${range.max}; write it like ${flag} ${flag === '--slo-attainment' ? '99' : '5'}`);
    return undefined;
  }
  return v;
}

/**
 * Settings of `--profile capacity` (undefined for other profiles). Capacity flags without the capacity profile are
 * problems, not silently ignored; the search needs an SLO to search against.
 */
export function resolveCapacitySettings(
  raw: RawCapacityFlags,
  ctx: { profile: string; slo: Slo | undefined; arrival: ArrivalKind },
  p: Problems,
  opts: { command?: string } = {},
): CapacitySettings | undefined {
  const attainment = parsePercent('--slo-attainment', raw.sloAttainment, p, { min: 0.1, max: 100 });
  const maxError = parsePercent('--max-error-share', raw.maxErrorShare, p, { min: 0, max: 100 });
  const precision = parsePercent('--capacity-precision', raw.capacityPrecision, p, { min: 0.1, max: 50 });
  const repeats = parseNumber('--capacity-repeats', raw.capacityRepeats, p, { integer: true, positive: true });
  const axis = raw.capacityAxis === undefined ? undefined : parseChoice('--capacity-axis', raw.capacityAxis, ['rate', 'concurrency'] as const, p);
  const searching = ctx.profile === 'capacity' || opts.command === 'plan';
  if (!searching) {
    const given = [
      raw.sloAttainment !== undefined && '--slo-attainment',
      raw.maxErrorShare !== undefined && '--max-error-share',
      raw.capacityAxis !== undefined && '--capacity-axis',
      raw.capacityPrecision !== undefined && '--capacity-precision',
      raw.capacityRepeats !== undefined && '--capacity-repeats',
    ].filter(Boolean);
    if (given.length > 0) p.push(`${given.join(', ')} shape${given.length === 1 ? 's' : ''} the capacity search; add --profile capacity`);
    return undefined;
  }
  if (!ctx.slo) {
    p.push(`${opts.command === 'plan' ? 'plan' : '--profile capacity'} searches against an SLO: add --slo, e.g. --slo ttft:300 or --slo ttft:500,itl:50`);
    return undefined;
  }
  return {
    axis: axis ?? CAPACITY_DEFAULTS.axis,
    slo: ctx.slo,
    attainment: attainment ?? CAPACITY_DEFAULTS.attainment,
    maxErrorShare: maxError !== undefined ? maxError / 100 : CAPACITY_DEFAULTS.maxErrorShare,
    precision: precision !== undefined ? precision / 100 : CAPACITY_DEFAULTS.precision,
    repeats: repeats ?? CAPACITY_DEFAULTS.repeats,
    arrival: ctx.arrival,
  };
}
