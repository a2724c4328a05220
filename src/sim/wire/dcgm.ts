/**
 * The simulated GPUs' power as a DCGM exporter shows it (dcgm-exporter's default counters): per GPU, the power gauge
 * `DCGM_FI_DEV_POWER_USAGE` (W) and the energy counter `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (mJ since the engine
 * started; DCGM counts since the driver loaded). `inferbench sim` appends these to its engine's own /metrics, so
 * `run --power auto` finds them there.
 */
import type { EnergyLedger } from '../engine/power.js';
import type { MetricLine } from './metrics.js';

/** The span the power gauge averages over (NVML's power reading is an average too, not an instant). */
export const POWER_GAUGE_AVERAGE_MS = 100;

export function dcgmMetricLines(ledger: EnergyLedger, nowMs: number, gpuName: string): MetricLine[] {
  const watts = ledger.averageWatts(nowMs, POWER_GAUGE_AVERAGE_MS);
  const mJ = Math.round(ledger.at(nowMs) * 1000);
  const lines: MetricLine[] = [];
  for (let i = 0; i < ledger.gpus; i++) {
    const labels = { gpu: String(i), UUID: `GPU-inferbench-sim-${i}`, device: `nvidia${i}`, modelName: gpuName, Hostname: 'inferbench-sim' };
    lines.push({ name: 'DCGM_FI_DEV_POWER_USAGE', type: 'gauge', help: 'Power draw (in W).', value: Math.round(watts * 1000) / 1000, labels });
  }
  for (let i = 0; i < ledger.gpus; i++) {
    const labels = { gpu: String(i), UUID: `GPU-inferbench-sim-${i}`, device: `nvidia${i}`, modelName: gpuName, Hostname: 'inferbench-sim' };
    lines.push({ name: 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', type: 'counter', help: 'Total energy consumption since boot (in mJ).', value: mJ, labels });
  }
  return lines;
}
