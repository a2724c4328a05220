import { arrivalDispersion } from '../metrics/summary.js';
import type { CapacityContradiction, CapacityProbe, CapacityResult, CapacitySettings } from './capacity-types.js';

/**
 * How the capacity search reads its probes (load/capacity.ts decides the next step from this):
 *  - the runs of one load are pooled: attainment and error share weighted by their requests, keep-up by rule;
 *  - a load that failed below a load that held is a contradiction — "not settled": the search runs both again
 *    (up to `repeats` runs each) before deciding, and one left after that is set aside and said in the answer,
 *    so that one noisy probe never puts the answer below a load the search showed to hold;
 *  - the attainment and error share are also fitted monotone over the loads (isotonic regression), for the chart.
 */

type FitPoint = CapacityResult['fitted'][number];

/** One load's runs, pooled. */
export interface PooledLoad {
  load: number;
  runs: CapacityProbe[];
  /** Weighted by requests over every run (a cut-short probe's own attainment included). */
  attainment: number;
  errorShare: number;
  /** Undefined when the load kept up (pooled over its runs); else why not. */
  keepUpFailure?: string;
  pass: boolean;
  /** Why it failed, pooled: 'did not keep up', 'attainment 97.0%', 'failed 3.0%'. */
  why?: string;
  /** Only the synchronous probe ran here: it cannot be run again as such. */
  synchronousOnly: boolean;
}

/**
 * Pool-adjacent-violators: the weighted least-squares fit of `values` (in load order) that never rises (or, with
 * `rising`, never falls).
 */
export function isotonic(values: readonly number[], weights: readonly number[], rising = false): number[] {
  const blocks: Array<{ sum: number; weight: number; count: number }> = [];
  for (let i = 0; i < values.length; i++) {
    const v = rising ? -(values[i] as number) : (values[i] as number);
    const w = Math.max(weights[i] as number, 1e-9);
    blocks.push({ sum: v * w, weight: w, count: 1 });
    // Merge while the last block is higher than the one before it (a non-increasing fit may not rise).
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1] as (typeof blocks)[number];
      const a = blocks[blocks.length - 2] as (typeof blocks)[number];
      if (b.sum / b.weight <= a.sum / a.weight) break;
      blocks.splice(blocks.length - 2, 2, { sum: a.sum + b.sum, weight: a.weight + b.weight, count: a.count + b.count });
    }
  }
  const out: number[] = [];
  for (const b of blocks) for (let k = 0; k < b.count; k++) out.push((rising ? -1 : 1) * (b.sum / b.weight));
  return out;
}

/**
 * Whether a load kept up, over its runs. All kept up: yes; none did: no. Mixed: the majority decides; on a tie, a
 * run stopped early as over-saturated (a confirmed growing queue) decides against, else the runs' sends and
 * completions summed decide by the capacity rule (completions at least 95% of sends, one request of slack per run,
 * 2.5 standard deviations of random arrivals).
 */
function pooledKeepUp(runs: readonly CapacityProbe[], settings: CapacitySettings): string | undefined {
  const failed = runs.filter((p) => p.overSaturated !== undefined);
  if (failed.length === 0) return undefined;
  const last = (failed[failed.length - 1] as CapacityProbe).overSaturated as string;
  if (failed.length === runs.length) return last;
  if (failed.length * 2 < runs.length) return undefined;
  if (failed.length * 2 > runs.length || failed.some((p) => p.earlyStop === true)) return `${failed.length} of ${runs.length} runs did not keep up: ${last}`;
  const sends = runs.reduce((t, p) => t + (p.sends ?? 0), 0);
  const completions = runs.reduce((t, p) => t + (p.completions ?? 0), 0);
  const noise = 2.5 * Math.sqrt(arrivalDispersion(settings.arrival, settings.burstiness) * sends);
  if (sends > 0 && completions < 0.95 * sends - runs.length - noise) {
    return `${failed.length} of ${runs.length} runs did not keep up; pooled, ${completions} completions for ${sends} sends`;
  }
  return undefined;
}

/** Every load's runs pooled, in load order. */
export function poolLoads(probes: readonly CapacityProbe[], settings: CapacitySettings): PooledLoad[] {
  const byLoad = new Map<number, CapacityProbe[]>();
  for (const p of probes) byLoad.set(p.load, [...(byLoad.get(p.load) ?? []), p]);
  return [...byLoad.keys()]
    .sort((a, b) => a - b)
    .map((load) => {
      const runs = byLoad.get(load) as CapacityProbe[];
      let w = 0;
      let score = 0;
      let err = 0;
      for (const p of runs) {
        const pw = Math.max(p.requests, 1);
        w += pw;
        score += pw * p.attainment;
        err += pw * p.errorShare;
      }
      const attainment = score / w;
      const errorShare = err / w;
      const keepUpFailure = pooledKeepUp(runs, settings);
      const requests = runs.reduce((t, p) => t + p.requests, 0);
      // Pooling divides sums: a value within rounding of the target passes.
      const eps = 1e-9;
      const why =
        requests === 0
          ? 'no request measured'
          : keepUpFailure !== undefined
            ? 'did not keep up'
            : attainment < settings.attainment - eps
              ? `attainment ${attainment.toFixed(1)}%`
              : errorShare > settings.maxErrorShare + eps
                ? `failed ${(100 * errorShare).toFixed(1)}%`
                : undefined;
      return {
        load,
        runs,
        attainment,
        errorShare,
        ...(keepUpFailure !== undefined ? { keepUpFailure } : {}),
        pass: why === undefined,
        ...(why !== undefined ? { why } : {}),
        synchronousOnly: runs.every((p) => p.stage === 0),
      };
    });
}

/** The highest load that held, and the loads below it that failed: the contradictions to resolve. */
export function contradictions(pooled: readonly PooledLoad[]): { held?: PooledLoad; failedBelow: PooledLoad[] } {
  const held = [...pooled].reverse().find((p) => p.pass);
  if (!held) return { failedBelow: [] };
  return { held, failedBelow: pooled.filter((p) => p.load < held.load && !p.pass) };
}

/** The contradictions left in the answer (after the search ran out of re-runs for them). */
export function unsettledList(pooled: readonly PooledLoad[]): CapacityContradiction[] {
  const { held, failedBelow } = contradictions(pooled);
  if (!held) return [];
  return failedBelow.map((f) => ({ failed: f.load, failedRuns: f.runs.length, why: f.why ?? 'failed', held: held.load, heldRuns: held.runs.length }));
}

/**
 * The fit over every load: pass/fail is the load's own runs pooled (a failure below the highest load that held is
 * set aside: not settled); attainment and error share are fitted monotone over the loads not set aside.
 */
export function fitPooled(pooled: readonly PooledLoad[]): FitPoint[] {
  const aside = new Set(contradictions(pooled).failedBelow.map((p) => p.load));
  const kept = pooled.filter((p) => !aside.has(p.load));
  const weights = kept.map((p) => p.runs.reduce((t, r) => t + Math.max(r.requests, 1), 0));
  const att = isotonic(
    kept.map((p) => p.attainment),
    weights,
  );
  const err = isotonic(
    kept.map((p) => p.errorShare),
    weights,
    true,
  );
  const fitOf = new Map(kept.map((p, i) => [p.load, { attainment: att[i] as number, errorShare: err[i] as number }]));
  return pooled.map((p) => {
    const fit = fitOf.get(p.load);
    return {
      load: p.load,
      attainment: fit?.attainment ?? p.attainment,
      errorShare: fit?.errorShare ?? p.errorShare,
      pass: p.pass,
      runs: p.runs.length,
      ...(aside.has(p.load) ? { setAside: true } : {}),
    };
  });
}

/** Highest pass and lowest failure above it, on the fit (set-aside loads are not part of it). */
export function boundaryOf(fit: readonly FitPoint[]): { lo?: FitPoint; hi?: FitPoint } {
  const kept = fit.filter((p) => !p.setAside);
  let lo: FitPoint | undefined;
  for (const p of kept) if (p.pass) lo = p;
  const hi = kept.find((p) => !p.pass && (lo === undefined || p.load > lo.load));
  return { ...(lo ? { lo } : {}), ...(hi ? { hi } : {}) };
}
