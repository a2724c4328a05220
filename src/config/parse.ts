import { DEFAULT_GRID_LATENCY_REQUESTS, type GridLatencyLoad } from '../load/profiles.js';
/** Small parsers for flag values. Each returns a value or pushes a one-line problem; nothing throws. */
export type Problems = string[];

/**
 * The items of a comma-separated flag value. An empty item (`1,,2`, `1,2,`) is refused rather than dropped: it is
 * usually a value left out by mistake. An empty or blank value gives no items (callers say what to give).
 */
export function listItems(flag: string, raw: string, problems: Problems): string[] | undefined {
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.every((s) => s === '')) return [];
  if (parts.some((s) => s === '')) {
    problems.push(`${flag} ${JSON.stringify(raw)} has an empty item; separate the values with single commas, e.g. ${flag} ${parts.filter((s) => s !== '').join(',')}`);
    return undefined;
  }
  return parts;
}

export function parseNumberList(flag: string, raw: string | undefined, problems: Problems, opts: NumberRule = {}): number[] | undefined {
  if (raw === undefined) return undefined;
  const parts = listItems(flag, raw, problems);
  if (parts === undefined) return undefined;
  if (parts.length === 0) {
    problems.push(`${flag} is empty; give a comma-separated list such as ${flag} ${opts.integer ? '1,4,16' : '0.5,1,2'}`);
    return undefined;
  }
  const out: number[] = [];
  for (const p of parts) {
    const n = parseNumber(flag, p, problems, opts);
    if (n === undefined) return undefined;
    out.push(n);
  }
  return out;
}

export interface NumberRule {
  integer?: boolean;
  min?: number;
  positive?: boolean;
}

export function parseNumber(flag: string, raw: string | undefined, problems: Problems, opts: NumberRule = {}): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  const bad =
    raw.trim() === '' ||
    !Number.isFinite(n) ||
    (opts.integer === true && !Number.isInteger(n)) ||
    (opts.min !== undefined && n < opts.min) ||
    (opts.positive === true && !(n > 0));
  if (bad) {
    const kind = opts.integer ? 'a whole number' : 'a number';
    const bound = opts.positive ? ' > 0' : opts.min !== undefined ? ` ≥ ${opts.min}` : '';
    problems.push(`${flag} ${JSON.stringify(raw)} is not ${kind}${bound}`);
    return undefined;
  }
  return n;
}

const DURATION_UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/**
 * A duration in seconds: a plain number is seconds (`30`, `0.5`), or numbers with units, `500ms`, `30s`, `5m`,
 * `1h`, also combined (`1m30s`). Returns seconds.
 */
export function parseDuration(flag: string, raw: string | undefined, problems: Problems, opts: { min?: number; positive?: boolean } = {}): number | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim().toLowerCase();
  let seconds: number | undefined;
  if (/^(\d+(\.\d*)?|\.\d+)$/.test(text)) seconds = Number(text);
  else if (/^((\d+(\.\d*)?|\.\d+)(ms|s|m|h))+$/.test(text)) {
    seconds = 0;
    for (const m of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)/g)) seconds += Number(m[1]) * (DURATION_UNITS[m[2] as string] as number);
  }
  const tooSmall = seconds !== undefined && ((opts.positive === true && !(seconds > 0)) || (opts.min !== undefined && seconds < opts.min));
  if (seconds === undefined || !Number.isFinite(seconds) || tooSmall) {
    const bound = opts.positive ? ' > 0' : opts.min !== undefined ? ` ≥ ${opts.min}` : '';
    problems.push(`${flag} ${JSON.stringify(raw)} is not a duration${bound}; write seconds (30) or a number with a unit: 500ms, 30s, 5m, 1h`);
    return undefined;
  }
  return seconds;
}

/**
 * `--rate 1,2,inf`: requests per second, each > 0; `inf` (or `infinity`) is a row that sends all its requests at
 * once (Infinity here; profiles.ts makes it a burst).
 */
export function parseRateList(flag: string, raw: string | undefined, problems: Problems): number[] | undefined {
  if (raw === undefined) return undefined;
  if (listItems(flag, raw, problems) === undefined) return undefined;
  const finite = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => !/^inf(inity)?$/i.test(s))
    .join(',');
  const parts = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (parts.length === 0) return parseNumberList(flag, raw, problems, { positive: true });
  const numbers = finite === '' ? [] : parseNumberList(flag, finite, problems, { positive: true });
  if (numbers === undefined) return undefined;
  let next = 0;
  return parts.map((s) => (/^inf(inity)?$/i.test(s) ? Number.POSITIVE_INFINITY : (numbers[next++] as number)));
}

export function parseChoice<T extends string>(flag: string, raw: string | undefined, choices: readonly T[], problems: Problems): T | undefined {
  if (raw === undefined) return undefined;
  const hit = choices.find((c) => c === raw.toLowerCase());
  if (!hit) problems.push(`${flag} ${JSON.stringify(raw)} is not known; choose one of: ${choices.join(', ')}`);
  return hit;
}

export function parseJsonObject(flag: string, raw: string | undefined, problems: Problems): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // reported below
  }
  problems.push(`${flag} must be a JSON object, e.g. ${flag} '{"temperature":0}'`);
  return undefined;
}

/** `ttft:500,itl:50,e2e:10000` (milliseconds). */
export function parseSlo(raw: string | undefined, problems: Problems): { ttftMs?: number; itlMs?: number; e2eMs?: number } | undefined {
  if (raw === undefined) return undefined;
  const slo: { ttftMs?: number; itlMs?: number; e2eMs?: number } = {};
  for (const part of raw.split(',')) {
    const [key = '', value = ''] = part.split(':').map((s) => s.trim());
    const ms = Number(value);
    if (!(ms > 0) || !['ttft', 'itl', 'e2e'].includes(key)) {
      problems.push(`--slo ${JSON.stringify(raw)}: "${part}" should be ttft:MS, itl:MS or e2e:MS, e.g. --slo ttft:500,itl:50`);
      return undefined;
    }
    slo[`${key as 'ttft' | 'itl' | 'e2e'}Ms`] = ms;
  }
  return slo;
}

/** `--grid-latency-load synchronous` (default) or `rate:R`, optionally `,N` requests: how a grid cell's latency columns are measured. */
export function parseGridLatencyLoad(raw: string | undefined, p: Problems): GridLatencyLoad {
  const fallback: GridLatencyLoad = { kind: 'synchronous', requests: DEFAULT_GRID_LATENCY_REQUESTS };
  if (raw === undefined) return fallback;
  const m = /^(synchronous|rate:(\d+(?:\.\d+)?))(?:,(\d+))?$/.exec(raw.trim());
  const rate = m?.[2] !== undefined ? Number(m[2]) : undefined;
  const requests = m?.[3] !== undefined ? Number(m[3]) : DEFAULT_GRID_LATENCY_REQUESTS;
  if (!m || (rate !== undefined && !(rate > 0)) || !(requests >= 1)) {
    p.push(`--grid-latency-load ${JSON.stringify(raw)}: write synchronous or rate:R (requests per second), optionally ,N requests — e.g. --grid-latency-load rate:2,20`);
    return fallback;
  }
  return rate !== undefined ? { kind: 'rate', rate, requests } : { kind: 'synchronous', requests };
}
