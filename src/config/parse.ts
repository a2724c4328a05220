/** Small parsers for flag values. Each returns a value or pushes a one-line problem; nothing throws. */
export type Problems = string[];

export function parseNumberList(flag: string, raw: string | undefined, problems: Problems, opts: NumberRule = {}): number[] | undefined {
  if (raw === undefined) return undefined;
  const parts = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
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
