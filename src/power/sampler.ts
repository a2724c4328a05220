/**
 * Reads the GPUs' power through a run (one of sources.ts, every 100 ms) and gives each row the energy of its
 * window (energy.ts). An observer's tool like the server telemetry sampler: readings arrive on timers and stream
 * events, never on the load's hot path.
 */
import type { Energy } from '../results/energy.js';
import type { StageSummary } from '../results/stage.js';
import { performance } from 'node:perf_hooks';
import { rowEnergy, rowWindow, windowJoules } from './energy.js';
import { cmdReading, dcgmReadings, hasDcgmNames, nvidiaSmiReading, trtllmReadings } from './readings.js';
import type { PowerSample } from './samples.js';
import { powerSourceLabel, type PowerSourceSpec } from './source-spec.js';
import { pollingSource, spawnedSource, type ReadingSource } from './sources.js';

export const POWER_INTERVAL_MS = 100;

export interface PowerSamplerOptions {
  /** `auto`: the target whose /metrics is read. */
  targetUrl?: string;
  apiKey?: string;
  /** `--power-gpus`: the deployment's GPUs (undefined: every GPU the source reports). */
  gpus?: readonly number[];
  intervalMs?: number;
  /** How long a spawned source may take to print its first reading. */
  firstReadingTimeoutMs?: number;
}

const trimSlash = (u: string): string => u.replace(/\/+$/, '');

export class PowerSampler {
  private readonly readings: PowerSample[] = [];
  private source: ReadingSource | undefined;
  /** How results name the source (`energy.source`). */
  readonly label: string;

  constructor(
    readonly spec: PowerSourceSpec,
    private readonly opts: PowerSamplerOptions = {},
  ) {
    const interval = opts.intervalMs ?? POWER_INTERVAL_MS;
    const auth: Record<string, string> = opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {};
    const autoUrl = opts.targetUrl ? `${trimSlash(opts.targetUrl)}/metrics` : undefined;
    this.label = powerSourceLabel(spec, autoUrl);
    const firstTimeout = opts.firstReadingTimeoutMs ?? 5000;
    switch (spec.kind) {
      case 'dcgm':
        this.source = pollingSource(spec.url, dcgmReadings, interval);
        break;
      case 'auto':
        if (autoUrl) this.source = pollingSource(autoUrl, (body, t) => (hasDcgmNames(body) ? dcgmReadings(body, t) : []), interval, auth);
        break;
      case 'trtllm': {
        const base = trimSlash(spec.url);
        this.source = pollingSource(base.endsWith('/energy_metrics') ? base : `${base}/energy_metrics`, trtllmReadings, interval, auth);
        break;
      }
      case 'nvidia-smi':
        this.source = spawnedSource('nvidia-smi', 'nvidia-smi', ['--query-gpu=timestamp,index,power.draw', '--format=csv,noheader,nounits', '-lms', String(interval)], nvidiaSmiReading, firstTimeout);
        break;
      case 'cmd':
        this.source = spawnedSource(`--power cmd:${spec.command}`, spec.command, undefined, cmdReading, firstTimeout);
        break;
      case 'none':
        break;
    }
  }

  /** Starts reading: ok once the first readings came; otherwise why not (auto: the target has no DCGM names). */
  async start(): Promise<{ ok: boolean; problem?: string }> {
    if (!this.source) return { ok: false };
    const r = await this.source.start((samples) => void this.readings.push(...samples));
    if (!r.ok) this.stop();
    return r;
  }

  /** The GPUs the readings name so far (−1: one total for all). */
  gpusSeen(): number[] {
    return [...new Set(this.readings.map((s) => s.gpu))].sort((a, b) => a - b);
  }

  /** A row's energy over its window, or undefined for a row without a window. */
  energyOf(s: StageSummary): Energy | undefined {
    const w = rowWindow(s);
    if (!w) return undefined;
    return rowEnergy(s, windowJoules(this.readings, w.fromMs, w.toMs, this.label, this.opts.gpus), (w.toMs - w.fromMs) / 1000);
  }

  /** Energy of all chosen GPUs over any stretch of the run's clock. */
  joulesBetween(fromMs: number, toMs: number): ReturnType<typeof windowJoules> {
    return windowJoules(this.readings, fromMs, toMs, this.label, this.opts.gpus);
  }

  /** Every reading so far, in arrival order, with its wall-clock time (power.jsonl). */
  series(): Array<PowerSample & { epochMs: number }> {
    return this.readings.map((s) => ({ ...s, epochMs: Math.round((performance.timeOrigin + s.t) * 10) / 10 }));
  }

  stop(): void {
    this.source?.stop();
    this.source = undefined;
  }
}
