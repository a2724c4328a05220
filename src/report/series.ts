import type { StoredRun } from '../store/run-store.js';

/** Legend text for a run: engine · GPUs×GPU · quant [· label] [(predicted | simulated)]. */
export function seriesLabel(run: StoredRun): string {
  const { context, target } = run.summary;
  const engine = target.engine && target.engine !== 'unknown' ? target.engine : context.engine;
  const parts = [engine];
  if (context.engineVersion) parts[0] = `${engine} ${context.engineVersion}`;
  if (context.gpu) parts.push(`${context.gpus ?? 1}×${context.gpu}`);
  // A measured run's quantization is what the user said (--quant); simulated runs always record theirs.
  if (context.quant) parts.push(context.quant);
  if (context.label) parts.push(context.label);
  return `${parts.join(' · ')}${context.predicted ? ' (predicted)' : target.simulated ? ' (simulated)' : ''}`;
}

/** One legend name per run; runs that would read the same get their run id appended. */
export function seriesNames(runs: readonly StoredRun[]): string[] {
  const base = runs.map(seriesLabel);
  return base.map((name, i) => (base.filter((b) => b === name).length > 1 ? `${name} [${runs[i]?.id ?? i}]` : name));
}
