/**
 * `run --power SOURCE`: starts the power sampler (src/power/) before the load, and the observer that gives each row
 * the energy of its window. `auto` (the default) reads the target's own /metrics and stays silent when it has no
 * DCGM names; an explicit source that gives no reading stops the run before any load (exit 2).
 */
import { configError } from '../core/errors.js';
import { PowerSampler } from '../power/sampler.js';
import type { PowerSourceSpec } from '../power/source-spec.js';
import type { RunObserver } from '../runplan/observer.js';
import type { RunWriter } from '../store/run-writer.js';

export async function startPowerSampler(
  o: { power?: PowerSourceSpec; powerGpus?: number[]; apiKey?: string },
  baseUrl: string,
  say: (line: string) => void,
): Promise<PowerSampler | undefined> {
  const spec: PowerSourceSpec = o.power ?? { kind: 'auto' };
  if (spec.kind === 'none') return undefined;
  const sampler = new PowerSampler(spec, { targetUrl: baseUrl, ...(o.apiKey ? { apiKey: o.apiKey } : {}), ...(o.powerGpus ? { gpus: o.powerGpus } : {}) });
  const started = await sampler.start();
  if (!started.ok) {
    if (spec.kind === 'auto') return undefined;
    throw configError(`--power ${sampler.label}: ${started.problem ?? 'no power readings'}`, 'check the source, or run with --power none');
  }
  const seen = sampler.gpusSeen();
  const gpus = o.powerGpus ? `GPU ${o.powerGpus.join(', ')}` : seen.includes(-1) ? 'all GPUs (one total)' : `GPU ${seen.join(', ')}`;
  say(`power: reading ${sampler.label} every 100 ms (${gpus}); each row's energy covers its measured window only`);
  return sampler;
}

/** Each row's energy over its window, added to the row before it is written. */
export function powerObserver(sampler: PowerSampler | undefined): RunObserver | undefined {
  if (!sampler) return undefined;
  return {
    onStageEnd: (s, r) => {
      if (r.interrupted) return;
      const e = sampler.energyOf(s);
      if (e) s.energy = e;
    },
  };
}

/** power.jsonl: every reading on the run's clock (`t`, ms) and the wall clock (`epochMs`), for charts and checks. */
export function writePowerSeries(w: RunWriter, sampler: PowerSampler | undefined): void {
  const series = sampler?.series() ?? [];
  if (series.length > 0) w.writeText('power.jsonl', series.map((x) => JSON.stringify(x)).join('\n') + '\n');
}
