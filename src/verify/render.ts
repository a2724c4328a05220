/** `plan --verify`'s answer as text: predicted beside measured capacity per candidate, re-ranked by what was measured. */
import { isAbsolute, relative } from 'node:path';
import { renderMarkdown } from '../report/table.js';
import type { VerificationEntry, VerifyResult } from './types.js';

const f = (n: number | null | undefined, d = 2): string => (n === null || n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(d));
const pct = (n: number | null): string => (n === null ? '—' : `${n >= 0 ? '+' : ''}${n.toFixed(1)}%`);
const label = (e: VerificationEntry): string => `${e.candidate.gpus}× ${e.candidate.gpu} ${e.candidate.quant} ${e.candidate.engine}`;

export function renderVerification(v: VerifyResult, opts: { cwd?: string; serverKind: string }): string {
  const cwd = opts.cwd ?? process.cwd();
  // Relative to here when inside it, absolute otherwise (a temp folder as ../../../tmp/… helps nobody).
  const where = (p: string | null): string => {
    if (p === null) return '—';
    const r = relative(cwd, p);
    return r === '' ? '.' : r.startsWith('..') || isAbsolute(r) ? p : r;
  };
  const out: string[] = [];
  const measured = v.entries.filter((e) => e.measuredCapacity !== null);
  out.push(
    `verify: the plan's top ${v.entries.length} candidate${v.entries.length === 1 ? '' : 's'} launched (${opts.serverKind}) and measured one after another with the capacity profile, under the plan's SLO and workload`,
    `  predicted = the plan's capacity per replica (simulated); measured = the same search against the launched server; the search's stated precision is ±${+v.precisionPct.toFixed(2)}% (its bisection step, --capacity-precision), so a difference within it is agreement`,
    '',
  );
  const rows = v.entries.map((e) => [
    e.measuredRank !== undefined ? String(e.measuredRank) : '—',
    String(e.candidate.planRank),
    label(e),
    f(e.predictedCapacity),
    e.measuredCapacity !== null ? f(e.measuredCapacity) : e.status,
    pct(e.differencePct),
    e.withinPrecision === null ? '—' : e.withinPrecision ? 'yes' : `no (±${+v.precisionPct.toFixed(2)}%)`,
    e.measuredReplicas !== undefined ? `${e.candidate.replicas ?? '—'} → ${e.measuredReplicas}` : `${e.candidate.replicas ?? '—'}`,
    e.measuredCostPerHour !== undefined ? `$${e.measuredCostPerHour.toFixed(2)}` : '—',
    f(e.startupSeconds, 1),
    where(e.runDir ?? e.dir),
  ]);
  out.push(renderMarkdown({
    headers: ['Measured #', 'Plan #', 'Deployment', 'Predicted capacity (req/s)', 'Measured capacity (req/s)', 'Difference', 'Within precision', 'Replicas (plan → measured)', '$/hour (measured)', 'Start-up (s)', 'Run folder'],
    rows,
  }));
  out.push('');
  const failed = v.entries.filter((e) => e.measuredCapacity === null);
  for (const e of failed) {
    out.push(`${label(e)}: ${e.status}${e.error ? ` — ${e.error}` : ''} (server log: ${where(e.serverLog)})`);
    if (e.logTail) out.push(e.logTail.split('\n').slice(-5).map((l) => `    ${l}`).join('\n'));
  }
  if (measured.length > 0) {
    const off = measured.filter((e) => e.withinPrecision === false);
    out.push(off.length === 0
      ? `measured within ±${+v.precisionPct.toFixed(2)}% of the prediction: ${measured.length} of ${measured.length}`
      : `measured outside ±${+v.precisionPct.toFixed(2)}% of the prediction: ${off.map((e) => `${label(e)} ${pct(e.differencePct)}`).join(', ')}`);
    const best = measured[0] as VerificationEntry;
    const moved = best.candidate.planRank !== Math.min(...measured.map((e) => e.candidate.planRank));
    out.push(`cheapest measured: ${label(best)} (plan #${best.candidate.planRank}), ${best.measuredReplicas} replica${best.measuredReplicas === 1 ? '' : 's'} at $${f(best.measuredCostPerHour)}/hour${moved ? ' — measuring changed the order' : ''}`);
  }
  for (const n of v.notes) out.push(`note: ${n}`);
  if (v.savedCalibration) out.push(`saved: ${v.savedCalibration} (measured/simulated capacity per deployment; later plans use it with --calibration ${v.savedCalibration})`);
  out.push(`verify folder: ${where(v.dir)} (verify.json; per candidate: server.log and the run folder)`);
  return `${out.join('\n')}\n`;
}
