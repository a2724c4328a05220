import { outputFolder } from '../report/outputs.js';
/** `plan --out DIR`: the plan as markdown, JSON and CSV, the Pareto chart as SVG/PNG, and one self-contained HTML page. */
import { readFileSync } from 'node:fs';
import { compileSpec, specToSvg, svgToPng, vegaRuntimePath } from '../report/charts/render.js';
import { escapeHtml as esc, jsonForScript } from '../report/html-escape.js';
import { renderCsv } from '../report/table.js';
import { paretoChart } from './chart.js';
import type { PlanResult } from './types.js';

export const PLAN_FORMATS = ['md', 'json', 'csv', 'svg', 'png', 'html'] as const;
export type PlanFormat = (typeof PLAN_FORMATS)[number];

/** The JSON document `--json` prints and plan.json holds. */
export function planJson(plan: PlanResult, toolVersion: string): object {
  return { schemaVersion: 1, tool: { name: 'inferbench', version: toolVersion }, ...plan };
}

export function planCsv(plan: PlanResult): string {
  const headers = ['rank', 'status', 'gpu', 'gpus', 'quant', 'engine', 'gpuHourPrice', 'capacityPerReplica', 'replicas', 'totalGpus', 'costPerHour', 'costPerMillionOutputTokens', 'joulesPerOutputToken', 'tokensPerSecondPerGpu', 'tokensPerSecondPerUser', 'reason'];
  const cell = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'number' ? String(+v.toFixed(6)) : String(v));
  return renderCsv({ headers, rows: plan.candidates.map((c) => headers.map((h) => cell((c as unknown as Record<string, unknown>)[h]))) });
}

export async function writePlanOutputs(plan: PlanResult, text: string, formats: readonly PlanFormat[], outDir: string, toolVersion: string): Promise<string[]> {
  const { dir, put, written } = outputFolder(outDir);
  if (formats.includes('md')) put('plan.md', text);
  if (formats.includes('json')) put('plan.json', `${JSON.stringify(planJson(plan, toolVersion), null, 2)}\n`);
  if (formats.includes('csv')) put('plan.csv', planCsv(plan));
  const chart = paretoChart(plan);
  if (formats.includes('svg') || formats.includes('png')) {
    const svg = await specToSvg(chart.spec);
    if (formats.includes('svg')) put('pareto.svg', svg);
    if (formats.includes('png')) put('pareto.png', await svgToPng(svg));
  }
  if (formats.includes('html')) put('plan.html', await planHtml(plan, text, chart.spec, toolVersion));
  return written;
}

async function planHtml(plan: PlanResult, text: string, spec: Parameters<typeof compileSpec>[0], toolVersion: string): Promise<string> {
  const compiled = await compileSpec(spec);
  const runtime = readFileSync(vegaRuntimePath(), 'utf8');
  const title = `inferbench plan — ${plan.model} at ${plan.rate} req/s`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title>
<style>body{font-family:'DejaVu Sans',system-ui,sans-serif;margin:24px auto;max-width:1280px;padding:0 16px;color:#222}
pre{font-size:12px;overflow-x:auto;background:#fafafa;border:1px solid #eee;padding:8px}.note{color:#555;font-size:13px}</style></head>
<body>
<h1>${esc(title)}</h1>
<p class="note">Generated ${esc(new Date().toISOString())} by inferbench ${esc(toolVersion)}. Hover a point for its configuration and cost.</p>
<div id="pareto"></div>
<h2>Plan</h2>
<pre>${esc(text)}</pre>
<script>${runtime.replace(/<\/script/gi, '<\\/script')}</script>
<script type="application/json" id="ib-spec">${jsonForScript(compiled)}</script>
<script>
(function () {
  var spec = JSON.parse(document.getElementById('ib-spec').textContent);
  var el = document.getElementById('pareto');
  window.inferbenchCharts = new vega.View(vega.parse(spec), { renderer: 'svg', container: el, hover: true }).runAsync()
    .catch(function (err) { el.textContent = 'chart failed: ' + err.message; });
})();
</script>
</body></html>
`;
}
