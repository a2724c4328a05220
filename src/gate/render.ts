import { renderMarkdown, type Table } from '../report/table.js';
import type { GateCheck } from './decide.js';
import type { GateReport } from './gate.js';
import { RUN_TO_RUN_PRIOR } from './run-noise.js';

/** The gate's outputs: the terminal table, Markdown for a pull request ($GITHUB_STEP_SUMMARY), JUnit XML. */

/** One minus sign everywhere — ASCII, as thresholds are written and typed (`--max-regression output_tps=-5%`). */
const signed = (x: number, d = 1): string => (Number.isFinite(x) ? `${x >= 0 ? '+' : '-'}${Math.abs(x).toFixed(d)}` : '—');
const isErrors = (c: GateCheck): boolean => c.metric === 'errors';

/** A change as read: "+12.3%" for ratios, "+0.4 pt" for the error share. */
export function changeText(c: GateCheck, x: number): string {
  return isErrors(c) ? `${signed(x * 100, 2)} pt` : `${signed(x * 100)}%`;
}

function valueText(c: GateCheck, v: number): string {
  if (!Number.isFinite(v)) return '—';
  if (isErrors(c)) return `${(v * 100).toFixed(2)}%`;
  const unit = c.metric.includes('.') ? ' ms' : c.metric === 'output_tps' ? ' tok/s' : c.metric === 'rps' ? ' req/s' : '';
  return `${v >= 100 ? v.toFixed(1) : v.toFixed(2)}${unit}`;
}

export const verdictWord = (c: GateCheck): string => (c.verdict === 'pass' && c.improved ? 'pass (improved)' : c.verdict);

/** "ttft.p50 @ c=8: +21.3% [+19.0%, +23.5%] vs +10%" */
export function checkText(c: GateCheck): string {
  return `${c.metric} @ ${c.row}: ${changeText(c, c.change)} [${changeText(c, c.low)}, ${changeText(c, c.high)}] vs ${c.threshold}`;
}

/** The verdict in one line, first in every output. */
export function verdictLine(r: GateReport): string {
  const failed = r.checks.filter((c) => c.verdict === 'fail');
  const open = r.checks.filter((c) => c.verdict === 'inconclusive');
  const better = r.checks.filter((c) => c.improved);
  const n = r.checks.length;
  const head =
    r.verdict === 'fail'
      ? `FAIL: ${failed.length} of ${n} checks regressed beyond their threshold (${failed.map((c) => `${c.metric} @ ${c.row}`).join(', ')})`
      : r.verdict === 'inconclusive'
        ? `INCONCLUSIVE: nothing regressed beyond its threshold, but ${open.length} of ${n} checks cannot tell (${open.map((c) => `${c.metric} @ ${c.row}`).join(', ')})${r.inconclusiveAs ? `; counted as ${r.inconclusiveAs} (--inconclusive ${r.inconclusiveAs})` : ''}`
        : `PASS: all ${n} checks within their thresholds`;
  return better.length ? `${head}; improved: ${better.map((c) => `${c.metric} @ ${c.row} ${changeText(c, c.change)}`).join(', ')}` : head;
}

export function gateTable(r: GateReport): Table {
  return {
    headers: ['Row', 'Metric', 'Baseline', 'Candidate', 'Change [95% CI]', 'Threshold', 'Verdict'],
    rows: r.checks.map((c) => [
      c.row,
      c.metric,
      valueText(c, c.baseline),
      valueText(c, c.candidate),
      `${changeText(c, c.change)} [${changeText(c, c.low)}, ${changeText(c, c.high)}]`,
      c.threshold,
      verdictWord(c),
    ]),
  };
}

/** The lines under the table: what would decide each inconclusive check, what was left out, how the CI was made. */
export function noteLines(r: GateReport): string[] {
  const out: string[] = [];
  for (const c of r.checks) if (c.needs) out.push(`needs: ${c.metric} @ ${c.row}: ${c.needs}`);
  for (const u of r.unmatched) out.push(`unmatched: ${u}`);
  for (const s of r.skipped) out.push(`not judged: ${s}`);
  const single = [
    ...(r.checks.some((c) => c.runToRun?.baseline.runs === 1) ? ['baseline'] : []),
    ...(r.checks.some((c) => c.runToRun?.candidate.runs === 1) ? ['candidate'] : []),
  ];
  if (single.length > 0) {
    out.push(
      `one run on the ${single.join(' and the ')} side: how far runs of one server differ is assumed, not measured, so only a change well past its threshold fails — three runs a side measure it (docs/gate.md)`,
    );
  }
  const ev = [...new Set(r.checks.map((c) => c.evidence))];
  out.push(
    `Intervals: ${r.confidence * 100}% bootstrap of the ratio candidate/baseline (${r.resamples} resamples, seed ${r.seed}) over each run's measured requests${r.baseline.length + r.candidate.length > 2 ? ', runs resampled too (repeats)' : ''}${runToRunText(r)}; evidence: ${ev.join('; ')}.`,
    'pass: the interval lies inside the threshold; fail: beyond it; inconclusive: it straddles it. Baseline: ' + r.baseline.join(', ') + '; candidate: ' + r.candidate.join(', ') + '.',
  );
  return out;
}

/** How the intervals were widened by run-to-run variation (run-noise.ts), from what set it in the checks. */
function runToRunText(r: GateReport): string {
  const sides = r.checks.flatMap((c) => (c.runToRun ? [c.runToRun.baseline, c.runToRun.candidate] : []));
  if (sides.length === 0) return '';
  const parts: string[] = [];
  if (sides.some((s) => s.runs === 1)) {
    parts.push(`a side of one run is taken to vary by ±${RUN_TO_RUN_PRIOR * 100}% a run (1 sd: assumed, one run cannot show it), or more where its time blocks drifted further`);
  }
  if (sides.some((s) => s.runs > 1)) parts.push("a side of several runs by their spread (at least their time blocks' drift)");
  return `, widened by run-to-run variation: ${parts.join('; ')}`;
}

function pad(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => [...(r[i] ?? '')].length))) ?? [];
  return rows.map((r) => r.map((cell, i) => cell + ' '.repeat((widths[i] ?? 0) - [...cell].length)).join('  ').trimEnd());
}

export function renderGateText(r: GateReport): string {
  const t = gateTable(r);
  return [verdictLine(r), '', ...pad([t.headers, ...t.rows]), '', ...noteLines(r)].join('\n') + '\n';
}

/** For $GITHUB_STEP_SUMMARY or a pull-request comment: the verdict line first, then the table and the notes. */
export function renderGateMarkdown(r: GateReport): string {
  const icon = r.verdict === 'pass' ? '✅' : r.verdict === 'fail' ? '❌' : '⚠️';
  return [`${icon} **inferbench gate ${verdictLine(r)}**`, '', renderMarkdown(gateTable(r)), '', ...noteLines(r).map((l) => `- ${l}`), ''].join('\n');
}

const xml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

/**
 * JUnit XML: one test case per metric × row (classname the row, name the metric); a failure carries the figures.
 * An inconclusive check is a failure under --inconclusive fail, else skipped with what would decide it.
 */
export function renderGateJunit(r: GateReport): string {
  const failing = (c: GateCheck): boolean => c.verdict === 'fail' || (c.verdict === 'inconclusive' && r.inconclusiveAs === 'fail');
  const failures = r.checks.filter(failing).length;
  const skipped = r.checks.filter((c) => c.verdict === 'inconclusive' && !failing(c)).length;
  const cases = r.checks.map((c) => {
    const figures = `${c.metric} @ ${c.row}: baseline ${valueText(c, c.baseline)}, candidate ${valueText(c, c.candidate)}, change ${changeText(c, c.change)} [${changeText(c, c.low)}, ${changeText(c, c.high)}] (95% CI), threshold ${c.threshold}; ${c.evidence}`;
    const open = `    <testcase classname="${xml(c.row)}" name="${xml(c.metric)}"`;
    if (failing(c)) {
      const type = c.verdict === 'fail' ? 'regression' : 'inconclusive';
      return `${open}>\n      <failure message="${xml(`${c.verdict}: ${checkText(c)}`)}" type="${type}">${xml(figures + (c.needs ? `; needs: ${c.needs}` : ''))}</failure>\n    </testcase>`;
    }
    if (c.verdict === 'inconclusive') return `${open}>\n      <skipped message="${xml(`inconclusive: ${c.needs ?? checkText(c)}`)}"/>\n    </testcase>`;
    return `${open}>\n      <system-out>${xml(figures)}</system-out>\n    </testcase>`;
  });
  const attrs = `tests="${r.checks.length}" failures="${failures}" errors="0" skipped="${skipped}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="inferbench gate" ${attrs}>`,
    `  <testsuite name="inferbench gate" ${attrs}>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
