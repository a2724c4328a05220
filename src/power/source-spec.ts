/**
 * `--power SOURCE` and `--power-gpus LIST`: where a run reads the GPUs' power (sampler.ts reads it).
 * - `dcgm:URL`: a DCGM exporter's Prometheus page (`DCGM_FI_DEV_POWER_USAGE` per GPU, and the energy counter
 *   `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` when it is there, which is used in preference to integrating the gauge);
 * - `nvidia-smi`: nvidia-smi's query loop every 100 ms, ended with the run;
 * - `trtllm:URL`: trtllm-serve's `/energy_metrics` (`total_energy_j`, all its GPUs together);
 * - `cmd:COMMAND`: any command printing JSONL lines `{"t": epoch-ms, "gpu": i, "watts": w}`;
 * - `auto` (default): the target's own /metrics when it carries the DCGM names, else no power;
 * - `none`: no power.
 */
export type PowerSourceSpec =
  | { kind: 'dcgm'; url: string }
  | { kind: 'nvidia-smi' }
  | { kind: 'trtllm'; url: string }
  | { kind: 'cmd'; command: string }
  | { kind: 'auto' }
  | { kind: 'none' };

export const POWER_SOURCE_HELP = 'auto | none | dcgm:URL | nvidia-smi | trtllm:URL | cmd:COMMAND';

function httpUrl(raw: string): string | undefined {
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** The source named by `raw`, or a one-line problem saying what to write instead. */
export function parsePowerSource(raw: string): PowerSourceSpec | { problem: string } {
  const s = raw.trim();
  const lower = s.toLowerCase();
  if (lower === 'auto') return { kind: 'auto' };
  if (lower === 'none' || lower === 'off') return { kind: 'none' };
  if (lower === 'nvidia-smi') return { kind: 'nvidia-smi' };
  const colon = s.indexOf(':');
  const kind = colon > 0 ? lower.slice(0, colon) : '';
  const rest = colon > 0 ? s.slice(colon + 1).trim() : '';
  if (kind === 'dcgm' || kind === 'trtllm') {
    const url = httpUrl(rest);
    if (!url) return { problem: `--power ${kind}:URL needs an http(s) URL, e.g. ${kind === 'dcgm' ? 'dcgm:http://127.0.0.1:9400/metrics' : 'trtllm:http://127.0.0.1:8000'}` };
    return { kind, url };
  }
  if (kind === 'cmd') {
    if (!rest) return { problem: '--power cmd:COMMAND needs a command that prints JSONL lines {"t": epoch-ms, "gpu": i, "watts": w}' };
    return { kind: 'cmd', command: rest };
  }
  return { problem: `--power ${JSON.stringify(raw)} is not a power source; choose ${POWER_SOURCE_HELP}` };
}

/** `--power-gpus 0,1`: GPU indices, each a whole number ≥ 0, no repeats. */
export function parsePowerGpus(raw: string): number[] | { problem: string } {
  const parts = raw.split(',').map((x) => x.trim()).filter((x) => x !== '');
  const nums = parts.map(Number);
  if (parts.length === 0 || nums.some((n) => !Number.isInteger(n) || n < 0)) return { problem: `--power-gpus ${JSON.stringify(raw)}: give GPU indices separated by commas, e.g. --power-gpus 0,1` };
  return [...new Set(nums)].sort((a, b) => a - b);
}

/** How a source is named in results (`energy.source`) and in the run's lines. */
export function powerSourceLabel(spec: PowerSourceSpec, autoUrl?: string): string {
  switch (spec.kind) {
    case 'dcgm':
      return `dcgm:${spec.url}`;
    case 'trtllm':
      return `trtllm:${spec.url}`;
    case 'cmd':
      return `cmd:${spec.command}`;
    case 'auto':
      return autoUrl ? `dcgm:${autoUrl}` : 'auto';
    default:
      return spec.kind;
  }
}
