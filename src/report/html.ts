import { readFileSync } from 'node:fs';
import type { Slo } from '../metrics/summary.js';
import { runStatusLine, type StoredRun } from '../store/run-store.js';
import type { RunDetails, TelemetryPoint } from '../store/run-details.js';
import type { ChartDef } from './charts/specs.js';
import { compileSpec, vegaRuntimePath } from './charts/render.js';
import { escapeHtml as esc, jsonForScript, plainHeading } from './html-escape.js';
import { powerCharts, rowHistograms, telemetryCharts, timelineCharts, workloadCharts, type PowerChartPoint } from './html-charts.js';
import { goodputSection, healthSection, htmlTable, rowViewSection, workloadSection, type SampleRequestText } from './html-sections.js';
import type { Table } from './table.js';
import { fromMarkdown } from './terminal.js';

export interface HtmlInput {
  title: string;
  runs: readonly StoredRun[];
  names: readonly string[];
  /**
   * Heading (markdown as layouts.ts writes it) and table, per run or per comparison section, with the lines printed
   * under it in table.md and the terminal (Markdown text) and a capacity run's answer.
   */
  sections: readonly { heading: string; table: Table; notes?: readonly string[]; answer?: string }[];
  /** Lines under all the tables (compare's legend; the definitions note of imported runs). */
  tableNotes?: readonly string[];
  verdict?: { table: Table; lines: readonly string[] };
  capacityRanking?: { table: Table; lines: readonly string[] };
  charts: readonly ChartDef[];
  /** Per run: what requests.jsonl holds, sampled (store/run-details.ts). */
  details: readonly RunDetails[];
  /** Per run: telemetry.jsonl, seconds from the run's first send (empty when the server had no /metrics). */
  telemetry: readonly (readonly TelemetryPoint[])[];
  /** Per run: power.jsonl's watts, seconds from the run's first send (absent or empty: no --power readings). */
  power?: readonly (readonly PowerChartPoint[])[];
  /** Per run: sample-requests.json's requests (absent for predictions and older runs). */
  sampleTexts: readonly (SampleRequestText[] | undefined)[];
  /** SLO limits to draw (compare --slo, else the runs' own). */
  slo?: Slo;
  generatedAt: string;
  toolVersion: string;
}

function metadataTable(runs: readonly StoredRun[], names: readonly string[]): Table {
  const rows = runs.map((r, i) => {
    const { summary } = r;
    const { context: c, target: t } = summary;
    return [
      r.id,
      r.name,
      names[i] ?? '',
      c.model,
      `${c.engine}${c.engineVersion ? ` ${c.engineVersion}` : ''}`,
      c.gpu ? `${c.gpus ?? 1}× ${c.gpu}` : '—',
      c.quant ?? 'fp16',
      c.label ?? '',
      summary.createdAt,
      `${summary.profile} (${summary.layout})`,
      summary.workload,
      t.url ?? (t.simulated ? 'simulator' : t.api),
      `${summary.tool.name} ${summary.tool.version}`,
    ];
  });
  return {
    headers: ['ID', 'Folder', 'Series', 'Model', 'Engine', 'GPU', 'Quant', 'Label', 'Created', 'Profile', 'Workload', 'Target', 'Tool'],
    rows,
  };
}

/** Failed and cut requests of the measured windows by message, or in words that there were none. */
function failures(runs: readonly StoredRun[], names: readonly string[], details: readonly RunDetails[]): string {
  const rows: string[][] = [];
  details.forEach((s, i) => {
    const top = [...s.errors.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
    for (const [message, n] of top) rows.push([names[i] ?? runs[i]?.id ?? '', String(n), message]);
    if (s.badLines) rows.push([names[i] ?? '', String(s.badLines), 'requests.jsonl lines that are not JSON (skipped)']);
  });
  if (rows.length) return htmlTable({ headers: ['Run', 'Requests', 'Error'], rows });
  const measured = details.reduce((n, d) => n + d.total, 0);
  return measured > 0
    ? `<p>Failures: none — all ${measured} measured requests succeeded.</p>`
    : '<p>Failures: none recorded — the runs have no request records (requests.jsonl is missing or empty).</p>';
}

/** A note as table.md writes it (Markdown: `**bold**`, `\\*`; nested items on lines of their own, "\n  - "), as HTML. */
const noteHtml = (line: string): string => {
  const [head, ...items] = line.split('\n  - ');
  const html = (t: string): string => fromMarkdown(esc(t), { bold: (x) => `<strong>${x}</strong>` });
  return `${html(head ?? '')}${items.length ? `<ul>${items.map((i) => `<li>${html(i)}</li>`).join('')}</ul>` : ''}`;
};
const noteList = (lines: readonly string[] | undefined): string => (lines?.length ? `<ul class="note table-notes">${lines.map((l) => `<li>${noteHtml(l)}</li>`).join('')}</ul>` : '');

/** One run's (or comparison section's) table with its answer and the lines under it, as table.md has them. */
function section(s: HtmlInput['sections'][number]): string {
  const answer = s.answer ? `<p><strong>${esc(s.answer)}</strong></p>` : '';
  return `<h3>${esc(plainHeading(s.heading))}</h3>\n${htmlTable(s.table)}\n${answer}${noteList(s.notes)}`;
}

/**
 * Laid out for a 1400-px window: tables wrap their text instead of hiding columns behind a scroll bar, charts take
 * the width of their grid cell (two to a row), wide charts (grid panels, capacity) a row of their own.
 */
const CSS = `body{font-family:'DejaVu Sans',system-ui,sans-serif;margin:16px auto;max-width:1600px;padding:0 16px;color:#222}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em;margin:1.4em 0 .4em}
table{border-collapse:collapse;font-size:12.5px;max-width:100%}th,td{border:1px solid #ccc;padding:3px 6px;text-align:center;overflow-wrap:break-word}
th{background:#f3f3f3;font-weight:600}td{white-space:normal}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}.charts.three{grid-template-columns:repeat(auto-fill,minmax(400px,1fr))}
figure.chart{margin:0;border:1px solid #eee;padding:8px;min-width:0;overflow:hidden}figure.chart.wide{grid-column:1/-1;overflow-x:auto}
figure.chart .view{width:100%}.note{color:#555;font-size:13px}.picker{font-weight:600}.picker select{font-size:14px;margin-left:6px}
details.sample pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;padding:8px;font-size:12px;max-height:320px;overflow-y:auto}`;

/** Charts of a fixed shape keep their width; the others fill their grid cell (the PNGs keep their own width). */
function fitted(c: ChartDef): { spec: ChartDef['spec']; wide: boolean } {
  const s = c.spec as unknown as Record<string, unknown>;
  const fixedShape = 'facet' in s || 'vconcat' in s || 'hconcat' in s || 'concat' in s;
  if (fixedShape) return { spec: c.spec, wide: true };
  return { spec: { ...s, width: 'container', autosize: { type: 'fit-x', contains: 'padding' } } as unknown as ChartDef['spec'], wide: false };
}

/** One self-contained HTML file: the vega runtime is inlined, specs are precompiled, nothing is fetched. */
export async function renderHtml(input: HtmlInput): Promise<string> {
  const { runs, names, details } = input;
  const rowView = rowViewSection(runs, names);
  const groups = {
    summary: input.charts,
    rows: rowHistograms(details, rowView.firstKey, input.slo),
    time: timelineCharts(runs, names, details, input.slo),
    server: [...telemetryCharts(names, input.telemetry), ...powerCharts(names, input.power ?? [])],
    workload: workloadCharts(runs, names, details),
  };
  const all = [...groups.summary, ...groups.rows, ...groups.time, ...groups.server, ...groups.workload];
  const fits = all.map(fitted);
  const compiled = await Promise.all(fits.map(async (f, i) => ({ id: `chart-${i}`, spec: await compileSpec(f.spec), row: groups.rows.includes(all[i] as ChartDef) })));
  let next = 0;
  const figures = (charts: readonly ChartDef[], cls = 'charts'): string =>
    `<div class="${cls}">${charts
      .map((c) => {
        const i = next++;
        return `<figure class="chart${fits[i]?.wide ? ' wide' : ''}" data-chart="${esc(c.name)}"><div id="chart-${i}" class="view"></div></figure>`;
      })
      .join('\n')}</div>`;
  const sampled = details.some((s) => s.sampled);
  const runtime = readFileSync(vegaRuntimePath(), 'utf8');
  const notes = runs.flatMap((r, i) => [...r.summary.notes, ...r.warnings].filter(Boolean).map((n) => `${names[i] ?? r.id}: ${n}`));
  const windows = runs.map((r, i) => `${names[i] ?? r.id}: ${r.summary.windowRules}`).filter((w) => !w.endsWith(': '));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(input.title)}</title><style>${CSS}</style></head>
<body>
<h1>${esc(input.title)}</h1>
<p class="note">Generated ${esc(input.generatedAt)} by inferbench ${esc(input.toolVersion)} from saved runs. Click a legend entry to highlight a run; hover a mark for its values.</p>
${runs.map((r, i) => [names[i] ?? r.name, runStatusLine(r)] as const).filter(([, l]) => l).map(([n, l]) => `<p class="run-status"><strong>${esc(`${n}: ${l}`)}</strong></p>`).join('\n')}
<h2>Runs</h2>
${htmlTable(metadataTable(runs, names))}
${notes.length ? `<ul class="note">${notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : ''}
${windows.length ? `<details class="note"><summary>How each row's window was measured</summary><ul>${windows.map((w) => `<li>${esc(w)}</li>`).join('')}</ul></details>` : ''}
<h2>Tables</h2>
${input.sections.map(section).join('\n')}
${noteList(input.tableNotes)}
${input.capacityRanking ? `<h2 id="capacity-ranking">Capacity ranking</h2>\n${htmlTable(input.capacityRanking.table)}\n<ul>${input.capacityRanking.lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>` : ''}
${input.verdict ? `<h2>Verdict at matched load</h2>\n${htmlTable(input.verdict.table)}\n<ul>${input.verdict.lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>` : ''}
<h2>Charts</h2>
${figures(groups.summary)}
<h2 id="rows">One row at a time</h2>
<p class="note">Pick a row: its percentiles over every measured request, and its own distributions${sampled ? ' (a seeded sample of at most 600 values per row and metric)' : ''}.</p>
${rowView.html}
${figures(groups.rows, 'charts three')}
<h2 id="goodput">Goodput</h2>
${goodputSection(runs, names)}
<h2 id="over-time">Over time</h2>
<p class="note">Seconds from each run's first request; every request counts here, the ramp-up of each row included.</p>
${groups.time.length ? figures(groups.time) : '<p class="note">No request records (requests.jsonl is missing or empty).</p>'}
<h2 id="server">Server telemetry</h2>
${groups.server.length ? figures(groups.server) : '<p class="note">The server exposed no Prometheus /metrics during the run (or the run was predicted).</p>'}
<h2 id="client">Client health</h2>
${healthSection(runs, names)}
<h2 id="workload">Workload</h2>
${workloadSection(runs, names, input.sampleTexts)}
${figures(groups.workload)}
<h2 id="failures">Failures</h2>
${failures(runs, names, details)}
<script>${runtime.replace(/<\/script/gi, '<\\/script')}</script>
<script type="application/json" id="ib-specs">${jsonForScript(compiled)}</script>
<script>
(function () {
  var specs = JSON.parse(document.getElementById('ib-specs').textContent);
  var rowViews = [];
  window.inferbenchCharts = Promise.all(specs.map(function (c) {
    var el = document.getElementById(c.id);
    var view = new vega.View(vega.parse(c.spec), { renderer: 'svg', container: el, hover: true });
    if (c.row) rowViews.push(view);
    return view.runAsync().catch(function (err) { el.textContent = 'chart failed: ' + err.message; console.error(err); });
  }));
  var pick = document.getElementById('row-pick');
  if (pick) pick.addEventListener('change', function () {
    var key = pick.value;
    document.querySelectorAll('.row-view').forEach(function (d) { d.hidden = d.getAttribute('data-row') !== key; });
    window.inferbenchRowPicked = Promise.all(rowViews.map(function (v) { return v.signal('row', key).runAsync(); }));
  });
})();
</script>
</body></html>
`;
}
