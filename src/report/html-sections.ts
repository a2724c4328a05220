import type { MetricName, StageSummary } from '../results/index.js';
import type { StoredRun } from '../store/run-store.js';
import { describeLength } from '../workload/lengths.js';
import { rowKey } from './html-charts.js';
import { escapeHtml as esc } from './html-escape.js';
import { failureCell, rowMarks, samples, sweepOrder } from './layouts.js';
import { stoppedBeforeMeasuring } from './row-status.js';
import type { WorkloadSpecDoc } from './run-summary.js';
import type { Table } from './table.js';

/** A table that wraps its text rather than hiding columns behind a scroll bar. */
export function htmlTable(t: Table, cls = ''): string {
  const head = `<tr>${t.headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>`;
  const body = t.rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('\n');
  return `<div class="table-wrap"><table${cls ? ` class="${cls}"` : ''}><thead>${head}</thead><tbody>\n${body}\n</tbody></table></div>`;
}

const f2 = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(2));

/** A run's rows in table order (sweeps by load, grids in run order: burst then latency pass per cell). */
export function orderedStages(run: StoredRun): StageSummary[] {
  return run.summary.layout === 'grid' ? run.summary.stages : [...run.summary.stages].sort((a, b) => sweepOrder(a) - sweepOrder(b));
}

const ROW_METRICS: readonly [MetricName, string][] = [
  ['ttftMs', 'TTFT (ms)'],
  ['itlMs', 'ITL (ms)'],
  ['e2eMs', 'Request latency (ms)'],
  ['queuedE2eMs', 'Latency incl. client queue (ms)'],
  ['latencyPerOutputTokenMs', 'Latency per output token (ms)'],
  ['chunkGapMs', 'Chunk gap (ms)'],
  ['promptTokens', 'Prompt tokens'],
  ['outputTokens', 'Output tokens'],
];

/** One row's exact percentiles (from every measured request, not the sample) and its counts. */
function rowStats(s: StageSummary): string {
  const rows = ROW_METRICS.flatMap(([key, label]) => {
    const st = s.metrics[key];
    return st ? [[label, f2(st.mean), f2(st.median), f2(st.p90), f2(st.p95), f2(st.p99), f2(st.min), f2(st.max), String(st.count)]] : [];
  });
  // No success in the window: its rates are not zeros measured, they are not there (as in the tables).
  const rate = (n: number): string => (s.requests.ok > 0 ? f2(n) : '—');
  const facts = [
    `requests ok/sent ${samples(s)}`,
    `failed ${failureCell(s)}`,
    `${rate(s.requestThroughput)} req/s`,
    `${rate(s.outputTokenThroughput)} output tok/s`,
    ...(s.goodput ? [`goodput ${f2(s.goodput.requestsPerS)} req/s (${s.goodput.good} good)`] : []),
    ...(s.sloAttainment ? [`met the SLO: ${s.sloAttainment.percent.toFixed(1)}% of ${s.sloAttainment.of}`] : []),
    ...(stoppedBeforeMeasuring(s)
      ? ['no measured window (stopped before it)']
      : s.window
        ? [`window ${s.window.lengthS.toFixed(2)} s from ${s.window.startS.toFixed(2)} s`]
        : []),
  ];
  return `<p class="note">${esc(facts.join(' · '))}</p>${htmlTable({ headers: ['Metric', 'mean', 'p50', 'p90', 'p95', 'p99', 'min', 'max', 'samples'], rows })}`;
}

/**
 * The row picker and every row's own figures (one shown at a time). The picker also drives the row histograms
 * (their `row` signal), so what is shown always describes one load point.
 */
export function rowViewSection(runs: readonly StoredRun[], names: readonly string[]): { html: string; firstKey: string } {
  const groups = runs.map((r, i) => {
    const options = orderedStages(r).map((s) => `<option value="${esc(rowKey(i, s.index))}">${esc(rowMarks(s))}</option>`);
    return runs.length > 1 ? `<optgroup label="${esc(names[i] ?? r.id)}">${options.join('')}</optgroup>` : options.join('');
  });
  const first = runs[0] ? orderedStages(runs[0])[0] : undefined;
  const firstKey = first ? rowKey(0, first.index) : '';
  const views = runs.flatMap((r, i) =>
    orderedStages(r).map((s) => {
      const key = rowKey(i, s.index);
      const title = `${runs.length > 1 ? `${names[i] ?? r.id} — ` : ''}${s.label}`;
      return `<div class="row-view" data-row="${esc(key)}"${key === firstKey ? '' : ' hidden'}><h3>${esc(title)}</h3>${rowStats(s)}</div>`;
    }),
  );
  const picker = `<label class="picker">Row: <select id="row-pick">${groups.join('')}</select></label>`;
  return { html: `${picker}\n${views.join('\n')}`, firstKey };
}

/** Goodput and SLO attainment per row, where the run was measured with --slo. */
export function goodputSection(runs: readonly StoredRun[], names: readonly string[]): string {
  const rows = runs.flatMap((r, i) =>
    orderedStages(r)
      .filter((s) => s.goodput || s.sloAttainment)
      .map((s) => {
        const slo = s.goodput?.slo ?? r.summary.capacity?.slo ?? {};
        const limits = [slo.ttftMs !== undefined ? `TTFT ≤ ${slo.ttftMs} ms` : '', slo.itlMs !== undefined ? `ITL ≤ ${slo.itlMs} ms` : '', slo.e2eMs !== undefined ? `E2E ≤ ${slo.e2eMs} ms` : ''].filter(Boolean).join(', ');
        const a = s.sloAttainment;
        return [names[i] ?? r.id, s.label, limits || '—', f2(s.goodput?.requestsPerS), f2(s.requestThroughput), a ? `${a.met}/${a.of}` : '—', a ? `${a.percent.toFixed(1)}%` : '—'];
      }),
  );
  if (rows.length === 0) return '<p class="note">No SLO was given: run with <code>--slo ttft:MS,itl:MS</code> to measure goodput (requests per second meeting every limit).</p>';
  return htmlTable({ headers: ['Run', 'Row', 'SLO (every request)', 'Goodput (req/s)', 'Throughput (req/s)', 'Met / measured', 'Attainment'], rows });
}

/** The client's own health: was the figure the server's, or the client's limit? */
export function healthSection(runs: readonly StoredRun[], names: readonly string[]): string {
  const rows = runs.flatMap((r, i) => {
    const h = r.summary.health;
    if (!h) return [[names[i] ?? r.id, '—', '—', '—', '—', r.summary.context.predicted ? 'not measured (predicted in virtual time)' : 'not recorded']];
    return [[names[i] ?? r.id, `${h.dispatchLagP99Ms.toFixed(2)} ms`, `${h.eventLoopDelayP99Ms.toFixed(2)} ms`, `${(h.clientCpuShare * 100).toFixed(0)}%`, `${(h.connectWaitP99Ms ?? 0).toFixed(2)} ms`, h.warning ?? 'ok: the client kept up']];
  });
  return htmlTable({ headers: ['Run', 'Dispatch lag p99', 'Event-loop delay p99', 'Client CPU (one core)', 'Connection setup p99', 'Verdict'], rows });
}

function specCells(w: WorkloadSpecDoc | undefined, prose: string): string[] {
  if (!w) return [prose || '—', '—', '—', '—', '—'];
  const len = (d: WorkloadSpecDoc['promptTokens']): string => (d ? describeLength(d) : '—');
  const source = w.dataset
    ? `dataset ${w.dataset.path}${w.dataset.column ? ` (column ${w.dataset.column})` : ''}`
    : w.trace
      ? `trace ${w.trace.path}${w.trace.timeScale !== undefined ? ` ×${w.trace.timeScale}` : ''}`
      : w.kind === 'grid'
        ? `grid ${(w.inputLens ?? []).join(',')} × ${(w.outputLens ?? []).join(',')}, ${w.numPrompts} per cell`
        : w.kind;
  const extra = [
    w.sharedPrefix ? `shared prefix ${w.sharedPrefix.tokens} tokens × ${w.sharedPrefix.groups}` : '',
    w.turns ? `turns ${describeLength(w.turns)}` : '',
    w.scenario ? `scenario ${w.scenario}` : '',
    w.chat === undefined ? '' : w.chat ? 'chat endpoint' : 'completions endpoint',
    w.forcedOutputLength === false ? 'output length not forced' : '',
    w.stream === false ? 'not streamed' : '',
  ].filter(Boolean);
  return [source, len(w.promptTokens), len(w.outputTokens), w.tokenizer ?? '—', extra.join('; ') || '—'];
}

/** What each run sent: the workload's fields and (measured runs) a few of its requests as text, escaped. */
export function workloadSection(runs: readonly StoredRun[], names: readonly string[], sampleTexts: readonly (SampleRequestText[] | undefined)[]): string {
  const table = htmlTable({
    headers: ['Run', 'Workload', 'Prompt tokens', 'Output tokens', 'Tokenizer', 'Also'],
    rows: runs.map((r, i) => [names[i] ?? r.id, ...specCells(r.summary.workloadSpec, r.summary.workload)]),
  });
  const texts = runs.flatMap((r, i) =>
    (sampleTexts[i] ?? []).map((s) => {
      const body = s.messages ? s.messages.map((m) => `[${m.role}] ${m.content}`).join('\n\n') : s.prompt;
      const head = `${runs.length > 1 ? `${names[i] ?? r.id} — ` : ''}request ${s.index}: ${s.promptTokens} prompt tokens → ${s.outputTokens} output tokens${s.truncated ? ' (text cut)' : ''}`;
      return `<details class="sample"><summary>${esc(head)}</summary><pre>${esc(body)}</pre></details>`;
    }),
  );
  const none = runs.every((_, i) => !sampleTexts[i]?.length) ? '<p class="note">No request text kept (predicted runs model token counts only; runs before this version kept none).</p>' : '';
  return `${table}\n${texts.join('\n')}${none}`;
}

/** One sample request as sample-requests.json holds it (cli/sample-requests.ts). */
export interface SampleRequestText {
  index: number;
  promptTokens: number;
  outputTokens: number;
  prompt: string;
  messages?: Array<{ role: string; content: string }>;
  truncated?: boolean;
}
