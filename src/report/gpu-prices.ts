import { findHardware } from '../sim/catalog/registry.js';
import type { StoredRun } from '../store/run-store.js';

/**
 * What a GPU-hour costs, for compare's cost and per-dollar figures: one price for every run
 * (`--gpu-hour-price 2.49`), or a price per catalog GPU (`--gpu-hour-price H100=2.49,A100-80GB=1.79`,
 * `--prices FILE`) looked up by each run's recorded GPU. With per-GPU prices, runs on different GPUs are no
 * longer ranked per dollar exactly as they are per GPU.
 */
export interface PriceOptions {
  /** USD per GPU-hour for every run. */
  gpuHourPrice?: number;
  /** USD per GPU-hour by catalog GPU name (aliases already resolved). */
  gpuHourPrices?: Readonly<Record<string, number>>;
}

export const PRICE_UNIT = 'USD per GPU-hour';

export const pricesGiven = (opts: PriceOptions): boolean => opts.gpuHourPrice !== undefined || opts.gpuHourPrices !== undefined;

/** Why a run got no price from a per-GPU list. */
export type UnpricedReason = 'no-gpu-recorded' | 'gpu-not-in-catalog' | 'gpu-not-listed';

export interface RunPrice {
  /** USD per GPU-hour; absent when the run has no price. */
  price?: number;
  /** The GPU as the run recorded it. */
  recordedGpu?: string;
  /** Its catalog name, when the catalog knows it (`A100-SXM4-80GB` → `A100-80GB`). */
  gpu?: string;
  why?: UnpricedReason;
}

function catalogName(gpu: string): string | undefined {
  try {
    return findHardware(gpu).name;
  } catch {
    return undefined;
  }
}

export function runPrice(run: StoredRun, opts: PriceOptions): RunPrice {
  const recordedGpu = run.summary.context.gpu;
  const gpu = recordedGpu ? catalogName(recordedGpu) : undefined;
  const where = { ...(recordedGpu ? { recordedGpu } : {}), ...(gpu ? { gpu } : {}) };
  if (opts.gpuHourPrice !== undefined) return { price: opts.gpuHourPrice, ...where };
  if (opts.gpuHourPrices === undefined) return where;
  if (!recordedGpu) return { ...where, why: 'no-gpu-recorded' };
  if (!gpu) return { ...where, why: 'gpu-not-in-catalog' };
  const price = opts.gpuHourPrices[gpu];
  return price === undefined ? { ...where, why: 'gpu-not-listed' } : { price, ...where };
}

const usd = (n: number): string => `$${n.toFixed(2)}`;

/** "H100 $2.49, A100-80GB $1.79": the listed prices of the GPUs these runs used, in run order. */
function usedPrices(runs: readonly StoredRun[], opts: PriceOptions): string {
  const seen = new Map<string, number>();
  for (const run of runs) {
    const p = runPrice(run, opts);
    if (p.gpu && p.price !== undefined && !seen.has(p.gpu)) seen.set(p.gpu, p.price);
  }
  return [...seen].map(([gpu, price]) => `${gpu} ${usd(price)}`).join(', ');
}

/**
 * The price a figure was computed at, for table headers: `at $2/GPU-hour` for one price (as given), or
 * `at each run's GPU-hour price: H100 $2.49, A100-80GB $1.79`.
 */
export function priceBasis(runs: readonly StoredRun[], opts: PriceOptions): string {
  if (opts.gpuHourPrice !== undefined) return `at $${opts.gpuHourPrice}/GPU-hour`;
  const used = usedPrices(runs, opts);
  return used ? `at each run's GPU-hour price: ${used}` : "at each run's GPU-hour price: none of these runs' GPUs is listed";
}

/** A cell for a run without a price under a per-GPU list. */
export function unpricedCell(p: RunPrice): string {
  if (p.why === 'no-gpu-recorded') return '— (no GPU recorded)';
  if (p.why === 'gpu-not-in-catalog') return `— (no price for ${p.recordedGpu})`;
  return `— (no price for ${p.gpu})`;
}

/** One line per run the per-GPU prices do not cover: which run, why, and what to pass. */
export function missingPriceLines(runs: readonly StoredRun[], names: readonly string[], opts: PriceOptions): string[] {
  const everyRun = 'one --gpu-hour-price USD prices every run alike';
  return runs.flatMap((run, i) => {
    const p = runPrice(run, opts);
    const who = names[i] ?? run.id;
    if (p.why === 'gpu-not-listed') return [`No GPU-hour price for ${who} (GPU ${p.gpu}): it gets no cost; add ${p.gpu}=USD to --gpu-hour-price.`];
    if (p.why === 'no-gpu-recorded') return [`No GPU-hour price for ${who}: the run recorded no GPU (record it with --gpu NAME), so it gets no cost; ${everyRun}.`];
    if (p.why === 'gpu-not-in-catalog') return [`No GPU-hour price for ${who}: its GPU "${p.recordedGpu}" is not in the catalog, so no listed price applies and it gets no cost; ${everyRun}.`];
    return [];
  });
}

export interface PricesJson {
  unit: typeof PRICE_UNIT;
  /** The one price for every run, or null with per-GPU prices. */
  everyRun: number | null;
  /** The per-GPU prices given (catalog names), or null with one price. */
  perGpu: Record<string, number> | null;
  /** Each run's price as used; null where it had none. */
  runs: Array<{ runId: string; series: string; gpu: string | null; gpuHourPrice: number | null }>;
}

export function pricesJson(runs: readonly StoredRun[], names: readonly string[], opts: PriceOptions): PricesJson | null {
  if (!pricesGiven(opts)) return null;
  return {
    unit: PRICE_UNIT,
    everyRun: opts.gpuHourPrice ?? null,
    perGpu: opts.gpuHourPrices ? { ...opts.gpuHourPrices } : null,
    runs: runs.map((run, i) => {
      const p = runPrice(run, opts);
      return { runId: run.id, series: names[i] ?? run.id, gpu: p.gpu ?? p.recordedGpu ?? null, gpuHourPrice: p.price ?? null };
    }),
  };
}
