import { readFileSync } from 'node:fs';
import type { StoredRun } from '../store/run-store.js';
import type { RequestSample } from '../store/requests-reader.js';
import { histogramChart, type ChartDef } from './charts/specs.js';
import { compileSpec, vegaRuntimePath } from './charts/render.js';
import { escapeHtml as esc, jsonForScript, plainHeading } from './html-escape.js';
import type { Table } from './table.js';

export interface HtmlInput {
  title: string;
  runs: readonly StoredRun[];
  names: readonly string[];
  /** Heading (markdown as layouts.ts writes it) and table, per run or per comparison section. */
  sections: readonly { heading: string; table: Table }[];
  verdict?: { table: Table; lines: readonly string[] };
  capacityRanking?: { table: Table; lines: readonly string[] };
  charts: readonly ChartDef[];
  samples: readonly RequestSample[];
  generatedAt: string;
  toolVersion: string;
}

function htmlTable(t: Table): string {
  const head = `<tr>${t.headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>`;
  const body = t.rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('\n');
  return `<div class="scroll"><table><thead>${head}</thead><tbody>\n${body}\n</tbody></table></div>`;
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

function distributionCharts(names: readonly string[], samples: readonly RequestSample[]): ChartDef[] {
  const metrics = [
    ['ttftMs', 'dist-ttft', 'Time to first token (ms)'],
    ['itlMs', 'dist-itl', 'Inter-token latency (ms)'],
    ['e2eMs', 'dist-e2e', 'Request latency (ms)'],
  ] as const;
  return metrics.flatMap(([key, name, title]) => {
    const values = samples.flatMap((s, i) => s[key].map((value) => ({ series: names[i] ?? String(i), value })));
    return values.length ? [histogramChart(name, title, values, names)] : [];
  });
}

function failures(runs: readonly StoredRun[], names: readonly string[], samples: readonly RequestSample[]): string {
  const rows: string[][] = [];
  samples.forEach((s, i) => {
    const top = [...s.errors.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
    for (const [message, n] of top) rows.push([names[i] ?? runs[i]?.id ?? '', String(n), message]);
    if (s.badLines) rows.push([names[i] ?? '', String(s.badLines), 'requests.jsonl lines that are not JSON (skipped)']);
  });
  if (!rows.length) return '<p>No failed request in the measured windows.</p>';
  return htmlTable({ headers: ['Run', 'Requests', 'Error'], rows });
}

const CSS = `body{font-family:'DejaVu Sans',system-ui,sans-serif;margin:24px auto;max-width:1280px;padding:0 16px;color:#222}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em;margin:1.4em 0 .4em}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:center;white-space:nowrap}
th{background:#f3f3f3}.scroll{overflow-x:auto}.charts{display:flex;flex-wrap:wrap;gap:16px}
figure.chart{margin:0;border:1px solid #eee;padding:8px}.note{color:#555;font-size:13px}`;

/** One self-contained HTML file: the vega runtime is inlined, specs are precompiled, nothing is fetched. */
export async function renderHtml(input: HtmlInput): Promise<string> {
  const dists = distributionCharts(input.names, input.samples);
  const all = [...input.charts, ...dists];
  const compiled = await Promise.all(all.map(async (c, i) => ({ id: `chart-${i}`, spec: await compileSpec(c.spec) })));
  const figure = (c: ChartDef, i: number): string => `<figure class="chart" data-chart="${esc(c.name)}"><div id="chart-${i}" class="view"></div></figure>`;
  const sampled = input.samples.some((s) => s.sampled);
  const runtime = readFileSync(vegaRuntimePath(), 'utf8');
  const notes = input.runs.flatMap((r, i) => [...r.summary.notes, r.summary.windowRules, ...r.warnings].filter(Boolean).map((n) => `${input.names[i] ?? r.id}: ${n}`));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(input.title)}</title><style>${CSS}</style></head>
<body>
<h1>${esc(input.title)}</h1>
<p class="note">Generated ${esc(input.generatedAt)} by inferbench ${esc(input.toolVersion)} from saved runs. Click a legend entry to highlight a run; hover a mark for its values.</p>
<h2>Runs</h2>
${htmlTable(metadataTable(input.runs, input.names))}
${notes.length ? `<ul class="note">${notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : ''}
<h2>Tables</h2>
${input.sections.map((s) => `<h3>${esc(plainHeading(s.heading))}</h3>\n${htmlTable(s.table)}`).join('\n')}
${input.capacityRanking ? `<h2 id="capacity-ranking">Capacity ranking</h2>\n${htmlTable(input.capacityRanking.table)}\n<ul>${input.capacityRanking.lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>` : ''}
${input.verdict ? `<h2>Verdict at matched load</h2>\n${htmlTable(input.verdict.table)}\n<ul>${input.verdict.lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>` : ''}
<h2>Charts</h2>
<div class="charts">${input.charts.map((c, i) => figure(c, i)).join('\n')}</div>
<h2>Per-request distributions</h2>
<p class="note">Successful measured requests${sampled ? ', a seeded sample of at most 2,000 per run and metric' : ''}.</p>
<div class="charts">${dists.map((c, i) => figure(c, input.charts.length + i)).join('\n')}</div>
<h3>Failures</h3>
${failures(input.runs, input.names, input.samples)}
<script>${runtime.replace(/<\/script/gi, '<\\/script')}</script>
<script type="application/json" id="ib-specs">${jsonForScript(compiled)}</script>
<script>
(function () {
  var specs = JSON.parse(document.getElementById('ib-specs').textContent);
  window.inferbenchCharts = Promise.all(specs.map(function (c) {
    var el = document.getElementById(c.id);
    return new vega.View(vega.parse(c.spec), { renderer: 'svg', container: el, hover: true }).runAsync()
      .catch(function (err) { el.textContent = 'chart failed: ' + err.message; console.error(err); });
  }));
})();
</script>
</body></html>
`;
}
