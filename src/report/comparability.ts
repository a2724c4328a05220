import { clip } from '../core/short-error.js';
import type { StoredRun } from '../store/run-store.js';
import { capacityTerms } from './capacity-text.js';

/**
 * Whether saved runs measure the same thing, so that a verdict between them means something. Different
 * engines, GPUs, GPU counts, quantizations or labels are what `compare` is for; a different model, workload
 * (prompt/output lengths, dataset, shared prefixes, chat template), load profile or measuring-window rule
 * is not: "+703.5%" between an 8B and a 70B model says nothing about either server.
 */
export interface RunMismatch {
  /** What differs, as the user knows it: "model", "prompt/output lengths", "workload", "profile", "window rules". */
  field: string;
  /** The baseline's value and the first run that differs from it. */
  baseline: { run: string; value: string };
  other: { run: string; value: string };
}

/**
 * Quantization tags at the end of a model name: the same model quantized is still the same model (comparing
 * quantizations is what compare is for). AWQ, GPTQ[-Int4/8], FP8[-dynamic], INT4/8, w4a16, bnb-4bit, GGUF
 * and llama.cpp's Q4_K_M style, fp16/bf16, MLX.
 */
const QUANT_SUFFIX = /[-_.](?:awq|gptq(?:[-_]?int[48])?|fp8(?:[-_]dynamic)?|int[48]|w[48]a(?:8|16)|bnb[-_]?[48]bit|[48][-_]?bit|gguf|q[2-8](?:_[a-z0-9]+)*|f16|fp16|bf16|mlx)$/i;

/** A model's identity: no organisation prefix, no quantization tag, case-folded ("Qwen/Qwen2-72B-Instruct-AWQ" = "qwen2-72b-instruct"). */
export function modelKey(model: string): string {
  let name = (model.split('/').pop() ?? model).trim();
  for (let prev = ''; prev !== name; ) {
    prev = name;
    name = name.replace(QUANT_SUFFIX, '');
  }
  // Meta's repos say "Meta-Llama-3.1-8B-Instruct", catalogs and servers often "Llama-3.1-8B-Instruct".
  return name.toLowerCase().replace(/^meta-(?=llama)/, '');
}

/** Fixed lengths as "512/128" when the run used them, else undefined (distributions, datasets, traces, grids). */
function fixedLengths(run: StoredRun): string | undefined {
  const { promptTokens, outputTokens } = run.summary.context;
  return promptTokens !== undefined && outputTokens !== undefined ? `${promptTokens}/${outputTokens}` : undefined;
}

/**
 * What shapes prompts beyond their lengths, read from the workload line: prefix sharing turns a run into a
 * cache test, a chat template adds tokens. (The tokenizer's name is left out: the same model on two servers
 * may be counted by a local file in one run and by the server in the other.)
 */
function promptShape(workload: string): string {
  const prefix = /\d+ shared prefixes of \d+ tokens/.exec(workload)?.[0];
  const chat = workload.includes('chat template counted') ? 'chat template counted' : undefined;
  return [prefix ?? 'no shared prefix', chat ?? 'no chat template'].join(', ');
}

/**
 * A workload line without what does not change the workload: the tokenizer's name in parentheses (the same
 * model may be counted by the server in one run and by a local file in the other; "(200 sampled)" stays) and
 * how prompts were fitted.
 */
export function workloadKey(workload: string): string {
  return workload
    .replace(/, fitted by re-encoding/g, '')
    .replace(/ \((?!\d+ sampled\))(?:[^()]|\([^()]*\))*\)(?=,|$| \[)/g, '')
    .trim();
}

/** A string field, or a structured one (a newer summary.json may store window rules as fields), as one comparable text. */
function canonical(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value.trim();
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

interface Facet {
  field: string;
  /** The value to compare and to show; undefined or '' = not recorded, which differs from nothing. */
  value(run: StoredRun): string | undefined;
  /** Values that compare equal although they read differently. Defaults to the shown value. */
  key?(value: string): string;
}

const FACETS: readonly Facet[] = [
  { field: 'model', value: (r) => r.summary.context.model || r.summary.target.model, key: modelKey },
  // Fixed lengths against fixed lengths; against a varied workload (distribution, dataset, trace) they differ in kind.
  { field: 'prompt/output lengths', value: (r) => fixedLengths(r) ?? (r.summary.layout === 'grid' ? undefined : `varied (${r.summary.workload})`), key: (v) => (v.startsWith('varied') ? 'varied' : v) },
  { field: 'prompt shape', value: (r) => (fixedLengths(r) !== undefined ? promptShape(r.summary.workload) : undefined) },
  // Grids, datasets, distributions and traces are described by their workload line as a whole.
  { field: 'workload', value: (r) => (fixedLengths(r) === undefined ? r.summary.workload : undefined), key: workloadKey },
  { field: 'profile', value: (r) => r.summary.profile },
  { field: 'window rules', value: (r) => canonical((r.summary as { windowRules?: unknown }).windowRules) },
  // Capacity runs: a capacity is a figure under its terms (limits, attainment, error limit, axis); other terms, another figure.
  { field: 'capacity SLO', value: (r) => (r.summary.capacity ? capacityTerms(r.summary.capacity).slo : undefined) },
  { field: 'attainment target', value: (r) => (r.summary.capacity ? capacityTerms(r.summary.capacity).attainment : undefined) },
  { field: 'error limit', value: (r) => (r.summary.capacity ? capacityTerms(r.summary.capacity).errorShare : undefined) },
  { field: 'capacity axis', value: (r) => (r.summary.capacity ? capacityTerms(r.summary.capacity).axis : undefined) },
];

/** Every way the later runs differ from the first (the baseline), at most one entry per field. */
export function runMismatches(runs: readonly StoredRun[]): RunMismatch[] {
  const [base, ...rest] = runs;
  if (!base) return [];
  const out: RunMismatch[] = [];
  for (const facet of FACETS) {
    const key = facet.key ?? ((v: string) => v);
    const bv = facet.value(base);
    if (!bv) continue;
    const other = rest.find((r) => {
      const v = facet.value(r);
      return v !== undefined && v !== '' && key(v) !== key(bv);
    });
    if (other) out.push({ field: facet.field, baseline: { run: base.id, value: bv }, other: { run: other.id, value: facet.value(other) ?? '' } });
  }
  return out;
}

/** How much of a value a mismatch line shows, and how much it keeps before the first difference. */
const SHOWN = 70;
const LEAD = 24;

/**
 * Two values cut to one line each where they differ: long values that share a beginning (two window rules) are shown
 * from shortly before their first difference, "…" marking what was left out, so the part that differs is seen.
 */
export function differingParts(a: string, b: string, width = SHOWN): [string, string] {
  const x = collapse(a);
  const y = collapse(b);
  if (x.length <= width && y.length <= width) return [x, y];
  let p = 0;
  while (p < x.length && p < y.length && x[p] === y[p]) p++;
  let start = Math.max(0, p - LEAD);
  // Start at a word where one is near.
  const space = x.lastIndexOf(' ', start);
  if (start > 0 && space >= 0 && start - space < LEAD / 2) start = space + 1;
  const part = (s: string): string => (start > 0 ? `…${clip(s.slice(start), width - 1)}` : clip(s, width));
  return [part(x), part(y)];
}

const collapse = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** "model: Llama-3.1-8B-Instruct (run 1a2b3c4d) vs Llama-3.1-70B-Instruct (run 5e6f7a8b)" — values clipped to one line where they differ. */
export function mismatchText(m: RunMismatch): string {
  const [base, other] = differingParts(m.baseline.value, m.other.value);
  return `${m.field}: ${base} (run ${m.baseline.run}) vs ${other} (run ${m.other.run})`;
}
