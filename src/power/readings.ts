/** Parsers of each source's output into PowerSamples (pure; sources.ts feeds them). */
import { performance } from 'node:perf_hooks';
import { parsePrometheus } from '../transport/prometheus.js';
import { ALL_GPUS, type PowerSample } from './samples.js';

export const DCGM_POWER = 'DCGM_FI_DEV_POWER_USAGE';
export const DCGM_ENERGY = 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION';
const DCGM_NAMES: ReadonlySet<string> = new Set([DCGM_POWER, DCGM_ENERGY]);

/** A DCGM exporter's page at time `t`: power (W) and the energy counter (mJ → J) per `gpu` label. */
export function dcgmReadings(text: string, t: number): PowerSample[] {
  const parsed = parsePrometheus(text, DCGM_NAMES);
  const byGpu = new Map<number, PowerSample>();
  const at = (labels: Record<string, string>, i: number): PowerSample => {
    const g = Number(labels['gpu'] ?? i);
    const gpu = Number.isInteger(g) && g >= 0 ? g : i;
    let s = byGpu.get(gpu);
    if (!s) byGpu.set(gpu, (s = { t, gpu }));
    return s;
  };
  (parsed.get(DCGM_POWER) ?? []).forEach((x, i) => void (at(x.labels, i).watts = x.value));
  (parsed.get(DCGM_ENERGY) ?? []).forEach((x, i) => void (at(x.labels, i).energyJ = x.value / 1000));
  return [...byGpu.values()];
}

/** Whether a Prometheus page carries the DCGM power names (`--power auto`). */
export function hasDcgmNames(text: string): boolean {
  return text.includes(DCGM_POWER) || text.includes(DCGM_ENERGY);
}

/** trtllm-serve's `/energy_metrics` JSON (`{"total_energy_j": J, "query_time": s}`): one total for all its GPUs. */
export function trtllmReadings(body: string, t: number): PowerSample[] {
  try {
    const j = JSON.parse(body) as { total_energy_j?: unknown };
    const e = j.total_energy_j;
    return typeof e === 'number' && Number.isFinite(e) ? [{ t, gpu: ALL_GPUS, energyJ: e }] : [];
  } catch {
    return [];
  }
}

/** nvidia-smi's `YYYY/MM/DD HH:MM:SS.mmm` (local time) on the run's clock; undefined when it does not read as one. */
function nvidiaSmiTime(text: string): number | undefined {
  const m = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, ms] = m;
  const epoch = new Date(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number((ms ?? '0').padEnd(3, '0'))).getTime();
  return Number.isFinite(epoch) ? epoch - performance.timeOrigin : undefined;
}

/**
 * One line of `nvidia-smi --query-gpu=timestamp,index,power.draw --format=csv,noheader,nounits`: its own timestamp
 * (else `receivedAt`), the GPU index and watts. `[N/A]` power and other lines give nothing.
 */
export function nvidiaSmiReading(line: string, receivedAt: number): PowerSample | undefined {
  const parts = line.split(',').map((x) => x.trim());
  if (parts.length < 3) return undefined;
  const gpu = Number(parts[1]);
  const watts = Number(parts[2]);
  if (!Number.isInteger(gpu) || gpu < 0 || !Number.isFinite(watts)) return undefined;
  return { t: nvidiaSmiTime(parts[0] as string) ?? receivedAt, gpu, watts };
}

/** One JSONL line of a `cmd:` source: `{"t": epoch-ms, "gpu": i, "watts": w}` (t absent: when it was read). */
export function cmdReading(line: string, receivedAt: number): PowerSample | undefined {
  let j: { t?: unknown; gpu?: unknown; watts?: unknown };
  try {
    j = JSON.parse(line) as typeof j;
  } catch {
    return undefined;
  }
  const gpu = j.gpu === undefined ? 0 : Number(j.gpu);
  const watts = Number(j.watts);
  if (!Number.isInteger(gpu) || gpu < 0 || !Number.isFinite(watts)) return undefined;
  const t = typeof j.t === 'number' && Number.isFinite(j.t) ? j.t - performance.timeOrigin : receivedAt;
  return { t, gpu, watts };
}
