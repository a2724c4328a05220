/**
 * `run --power SOURCE`: starts the power sampler (src/power/) before the load, and the observer that gives each row
 * the energy of its window. `auto` (the default) reads the target's own /metrics — with several targets, every
 * replica's — and says in one line when it finds no DCGM names there; an explicit source that gives no reading stops
 * the run before any load (exit 2). What was asked for and found is kept as `power` in summary.json and manifest.json.
 */
import { configError } from '../core/errors.js';
import { ReplicaPower, type ReplicaSource } from '../power/replica-power.js';
import { PowerSampler } from '../power/sampler.js';
import { powerSourceLabel, type PowerSourceSpec } from '../power/source-spec.js';
import type { Energy, RunPower } from '../results/energy.js';
import type { StageSummary } from '../results/stage.js';
import type { RunObserver } from '../runplan/observer.js';
import type { RunWriter } from '../store/run-writer.js';

/** What a run reads its rows' energy from: one source, or one per replica. */
export interface PowerReader {
  readonly label: string;
  energyOf(s: StageSummary): Energy | undefined;
  series(): object[];
  stop(): void;
}

export interface StartedPower {
  /** Absent: no source (asked for none, or `auto` found none). */
  reader?: PowerReader;
  /** summary.json / manifest.json `power`. */
  record: RunPower;
}

const trimSlash = (u: string): string => u.replace(/\/+$/, '');

const DCGM_NAME = 'DCGM_FI_DEV_POWER_USAGE';
const NO_AUTO_SOURCE = 'name one with --power dcgm:URL | nvidia-smi | trtllm:URL | cmd:COMMAND';

/**
 * Starts reading power for a run against `baseUrl` (or, with several --target URLs, against each of `replicas`).
 * `say` gets the run's lines: what is read, or why nothing is.
 */
export async function startPowerSampler(
  o: { power?: PowerSourceSpec; powerGpus?: number[]; apiKey?: string },
  baseUrl: string,
  say: (line: string) => void,
  replicas?: readonly string[],
): Promise<StartedPower> {
  const spec: PowerSourceSpec = o.power ?? { kind: 'auto' };
  const requested = powerSourceLabel(spec);
  if (spec.kind === 'none') return { record: { requested, found: null } };
  const samplerFor = (targetUrl: string): PowerSampler =>
    new PowerSampler(spec, { targetUrl, ...(o.apiKey ? { apiKey: o.apiKey } : {}), ...(o.powerGpus ? { gpus: o.powerGpus } : {}) });
  if (spec.kind === 'auto' && replicas && replicas.length > 1) return startReplicaPower(replicas, samplerFor, o.powerGpus, say);
  const sampler = samplerFor(baseUrl);
  const started = await sampler.start();
  if (!started.ok) {
    if (spec.kind !== 'auto') throw configError(`--power ${sampler.label}: ${started.problem ?? 'no power readings'}`, 'check the source, or run with --power none');
    const reason = `${trimSlash(baseUrl)}/metrics has no DCGM power readings (${DCGM_NAME})`;
    say(`power: --power auto found no GPU power source: ${reason}; no J/token or Avg W — ${NO_AUTO_SOURCE}`);
    return { record: { requested, found: null, reason } };
  }
  say(`power: reading ${sampler.label} every 100 ms (${gpuWords(sampler, o.powerGpus)}); each row's energy covers its measured window only${replicas && replicas.length > 1 ? `; one source for ${replicas.length} replicas: it must report every replica's GPUs` : ''}`);
  return { reader: sampler, record: { requested, found: sampler.label } };
}

function gpuWords(sampler: PowerSampler, chosen: readonly number[] | undefined): string {
  const seen = sampler.gpusSeen();
  return chosen ? `GPU ${chosen.join(', ')}` : seen.includes(-1) ? 'all GPUs (one total)' : `GPU ${seen.join(', ')}`;
}

/** `--power auto` over several replicas: each one's own /metrics, started together. */
async function startReplicaPower(
  urls: readonly string[],
  samplerFor: (url: string) => PowerSampler,
  chosen: readonly number[] | undefined,
  say: (line: string) => void,
): Promise<StartedPower> {
  const samplers = urls.map(samplerFor);
  const started = await Promise.all(samplers.map((s) => s.start()));
  const sources: ReplicaSource[] = urls.map((url, index) =>
    started[index]?.ok ? { index, url, sampler: samplers[index] as PowerSampler } : { index, url, missing: `${trimSlash(url)}/metrics has no ${DCGM_NAME}` },
  );
  const record = (found: string | null, reason?: string): RunPower => ({
    requested: 'auto',
    found,
    ...(reason ? { reason } : {}),
    replicas: sources.map((r) => ({ index: r.index, url: r.url, source: r.sampler?.label ?? null })),
  });
  const without = sources.filter((r) => !r.sampler);
  if (without.length === urls.length) {
    const reason = `no replica's /metrics has DCGM power readings (${DCGM_NAME})`;
    say(`power: --power auto found no GPU power source: ${reason}; no J/token or Avg W — ${NO_AUTO_SOURCE}`);
    return { record: record(null, reason) };
  }
  const power = new ReplicaPower(sources);
  const each = sources.filter((r) => r.sampler).map((r) => `replica ${r.index} ${r.sampler?.label} (${gpuWords(r.sampler as PowerSampler, chosen)})`);
  say(`power: reading each replica's own GPUs every 100 ms — ${each.join(', ')}; each row's energy is their sum over its measured window only`);
  let reason: string | undefined;
  if (without.length > 0) {
    reason = `${without.map((r) => `replica ${r.index} (${r.url})`).join(', ')} has no DCGM power on its /metrics: its GPUs cannot be counted, so no row gets a J/token`;
    say(`power: ${reason}`);
  }
  return { reader: power, record: record(power.label, reason) };
}

/** Each row's energy over its window, added to the row before it is written. */
export function powerObserver(power: PowerReader | undefined): RunObserver | undefined {
  if (!power) return undefined;
  return {
    onStageEnd: (s, r) => {
      if (r.interrupted) return;
      const e = power.energyOf(s);
      if (e) s.energy = e;
    },
  };
}

/** power.jsonl: every reading on the run's clock (`t`, ms) and the wall clock (`epochMs`), for charts and checks. */
export function writePowerSeries(w: RunWriter, power: PowerReader | undefined): void {
  const series = power?.series() ?? [];
  if (series.length > 0) w.writeText('power.jsonl', series.map((x) => JSON.stringify(x)).join('\n') + '\n');
}
