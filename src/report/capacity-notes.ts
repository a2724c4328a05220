import { attainmentMeaning, formatLoad } from '../load/capacity.js';
import type { CapacityResult } from '../load/capacity-types.js';
import type { StageSummary } from '../metrics/summary.js';

/** The lines under a capacity run's table: how the search decided, and what the target means. */
export function capacityNoteLines(c: CapacityResult, stages: readonly StageSummary[], opts: { predicted?: boolean } = {}): string[] {
  const lines = [attainmentMeaning(c)];
  const repeated = c.fitted.filter((p) => p.runs > 1).map((p) => formatLoad(p.load));
  const pooled = c.fitted.some((p) => {
    const own = c.probes.filter((q) => q.load === p.load);
    return own.some((q) => q.pass !== p.pass);
  });
  lines.push(
    `search: ${c.probes.length} probes on the ${c.axis} axis (synchronous, then doubling, then bisection to a step of ${c.axis === 'rate' ? `±${+(c.precision * 100).toFixed(2)}%` : '1 stream'}); ` +
      `pass/fail read from each load's runs pooled, a failure below a load that held run again before it counts${repeated.length > 0 ? `; loads run more than once (ambiguous near the target, or not settled): ${repeated.join(', ')}` : ''}` +
      `${pooled ? '; some runs of one load disagreed and were pooled' : ''}`,
  );
  if (c.reproducibility) lines.push(c.reproducibility.text);
  else if (opts.predicted) lines.push('reproducibility: virtual time — the same configuration and --seed give the same answer on any machine');
  else if (c.feasibleMax !== null && c.firstBreach !== null) lines.push('reproducibility: not measured — no load was run twice');
  // Rows marked * say why above; these fell short of the capacity rule only (completions under 95% of sends).
  const marked = new Set(stages.filter((s) => s.belowTarget).map((s) => s.index));
  const over = c.probes.filter((p) => p.overSaturated !== undefined && !marked.has(p.stage));
  if (over.length > 0) lines.push(`probes that did not keep up with their rate fail whatever their attainment: ${over.map((p) => `${formatLoad(p.load)} (${p.overSaturated})`).join('; ')}`);
  if (c.note) lines.push(c.note);
  return lines;
}
