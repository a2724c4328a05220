/**
 * GPU-hour prices. The user's own (`--gpu-hour-price H100=2.49,…`, `--prices FILE`) win; the built-in table
 * fills the rest and is always printed as an assumption with its date, because prices move every month.
 */
import { readFileSync } from 'node:fs';
import { configError } from '../core/errors.js';
import { findHardware } from '../sim/catalog/registry.js';

/** When the built-in prices were read, printed with them. */
export const DEFAULT_PRICES_DATE = '2026-05';

/**
 * Assumed on-demand USD per GPU-hour at specialty GPU clouds (not hyperscalers, not spot): round figures the
 * authors took as typical list prices in DEFAULT_PRICES_DATE — an assumption, not a quote; real prices vary by
 * provider and month. Every output that uses them says so; your own belong in --gpu-hour-price or --prices.
 */
export const DEFAULT_GPU_HOUR_PRICES: Readonly<Record<string, number>> = {
  'A100-40GB': 1.29,
  'A100-80GB': 1.79,
  'L20-48GB': 0.79,
  L40S: 0.99,
  H100: 2.49,
  H200: 3.49,
  'RTX-4090': 0.49,
};

export interface PriceTable {
  /** Catalog GPU name → USD per GPU-hour. */
  perGpuHour: Record<string, number>;
  /** GPUs whose price came from the built-in assumptions. */
  assumed: string[];
  /** GPUs whose price the user gave. */
  given: string[];
  /** Catalog GPUs left out of a search without --gpu because nobody priced them. */
  unpriced?: string[];
}

/** Prices the user gave: `--prices FILE`, then `--gpu-hour-price` (the flag wins). */
export interface GivenPrices {
  file?: Record<string, number>;
  flag?: Record<string, number>;
}

/** The user's price for a GPU, if any. */
function userPrice(gpu: string, given: GivenPrices): number | undefined {
  return given.flag?.[gpu] ?? given.file?.[gpu];
}

/** Whether a GPU has a price: the user's (file or flag) or the built-in assumption. */
export function hasPrice(gpu: string, given: GivenPrices): boolean {
  return userPrice(gpu, given) !== undefined || DEFAULT_GPU_HOUR_PRICES[gpu] !== undefined;
}

/** `H100=2.49,A100-80GB=1.79`: catalog GPU names (any alias) to USD per GPU-hour. */
export function parsePriceList(text: string, flag = '--gpu-hour-price'): Record<string, number> {
  const out: Record<string, number> = {};
  const parts = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (parts.length === 0) throw configError(`${flag} is empty`, `write GPU=USD pairs, e.g. ${flag} H100=2.49,A100-80GB=1.79`);
  for (const part of parts) {
    const m = /^(.+?)\s*=\s*\$?(\S+)$/.exec(part);
    if (!m) throw configError(`${flag} ${JSON.stringify(part)} is not GPU=USD`, `e.g. ${flag} H100=2.49,A100-80GB=1.79`);
    addPrice(out, m[1] as string, Number(m[2]), flag);
  }
  return out;
}

/** A JSON object `{ "H100": 2.49, "A100-80GB": 1.79 }` (USD per GPU-hour). */
export function loadPriceFile(path: string): Record<string, number> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code ? e.code : `not JSON (${e.message})`;
    throw configError(`--prices ${path}: ${why}`, 'give a JSON object of GPU name to USD per GPU-hour, e.g. {"H100": 2.49}');
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw configError(`--prices ${path}: expected a JSON object of GPU name to USD per GPU-hour`, 'e.g. {"H100": 2.49, "A100-80GB": 1.79}');
  }
  const out: Record<string, number> = {};
  for (const [gpu, usd] of Object.entries(raw)) addPrice(out, gpu, typeof usd === 'number' ? usd : Number.NaN, `--prices ${path}`);
  return out;
}

function addPrice(out: Record<string, number>, gpu: string, usd: number, where: string): void {
  let name: string;
  try {
    name = findHardware(gpu).name;
  } catch (err) {
    const e = err as { message: string; hint?: string };
    throw configError(`${where}: ${e.message}`, e.hint);
  }
  if (!(usd > 0 && Number.isFinite(usd))) throw configError(`${where}: the price of ${gpu} must be a number of USD > 0`, `e.g. ${gpu}=2.49`);
  out[name] = usd;
}

/**
 * The prices for the GPUs searched: the file's, then the flag's (the flag wins), then the built-in
 * assumption. A GPU with none at all (added by --catalog) is a usage error that names the flag to use.
 */
export function resolvePrices(gpus: readonly string[], given: GivenPrices): PriceTable {
  const table: PriceTable = { perGpuHour: {}, assumed: [], given: [] };
  for (const gpu of gpus) {
    const own = userPrice(gpu, given);
    const fallback = DEFAULT_GPU_HOUR_PRICES[gpu];
    if (own !== undefined) {
      table.perGpuHour[gpu] = own;
      table.given.push(gpu);
    } else if (fallback !== undefined) {
      table.perGpuHour[gpu] = fallback;
      table.assumed.push(gpu);
    } else {
      throw configError(`no price for GPU ${gpu}`, `add it with --gpu-hour-price ${gpu}=USD, or leave it out with --gpu`);
    }
  }
  return table;
}

/** The line printed when catalog GPUs were left out for want of a price. */
export function unpricedLine(table: PriceTable): string | undefined {
  const left = table.unpriced ?? [];
  if (left.length === 0) return undefined;
  return `not searched (no price): ${left.join(', ')} — add them with --gpu-hour-price ${left[0]}=USD,… (or --prices FILE)`;
}

/** The line printed whenever a built-in price is used. */
export function assumedPricesLine(table: PriceTable): string | undefined {
  if (table.assumed.length === 0) return undefined;
  const list = table.assumed.map((g) => `${g} $${(table.perGpuHour[g] as number).toFixed(2)}`).join(', ');
  return `assumed on-demand prices per GPU-hour as of ${DEFAULT_PRICES_DATE} (specialty clouds; yours via --gpu-hour-price or --prices): ${list}`;
}
