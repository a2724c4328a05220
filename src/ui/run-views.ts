import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { configError } from '../core/errors.js';
import { healthLine } from '../metrics/health.js';
import { buildCompareBundle, buildReportBundle } from '../report/bundles.js';
import type { ChartDef } from '../report/charts/specs.js';
import { runsSlo } from '../report/charts/axes.js';
import { powerCharts, rowHistograms, rowKey } from '../report/html-charts.js';
import { orderedStages } from '../report/html-sections.js';
import { rowMarks } from '../report/layouts.js';
import { mismatchText, runMismatches } from '../report/comparability.js';
import { plainHeading } from '../report/html-escape.js';
import { readPowerSeries, readRunDetails, type RunDetails } from '../store/run-details.js';
import type { StoredRun } from '../store/run-store.js';
import { toolVersion } from '../core/version.js';
import type { ChartJson, CompareView, RequestsView, RunView, TelemetryView } from './client/api-types.js';
import type { CatalogEntry } from './run-catalog.js';
import { redactJson, shellJoin } from './redact.js';
import { RUN_TIME_AXIS, telemetryCharts, ttftScatter, type TelemetrySample } from './ui-charts.js';

const chartJson = (c: ChartDef): ChartJson => ({ name: c.name, title: c.title, spec: c.spec as unknown as Record<string, unknown> });

/**
 * A line of the report's markdown as the text a reader sees: `**bold**` markers dropped and Markdown escapes
 * (`\*`, `\_`, `\|` …) undone, as the terminal prints them. The page puts it in as text, never as markup.
 */
export function plainNote(markdown: string): string {
  return markdown.replace(/\*\*(.+?)\*\*/g, '$1').replace(/\\([\\`*_{}[\]()#+\-.!|<>~])/g, '$1');
}

/**
 * The lines `inferbench report` prints under a run's table (findings, row marks, the capacity answer, an import's
 * definitions), read back from its markdown so the dashboard says exactly what the terminal says.
 */
export function tableFoot(markdown: string): { notes: string[]; verdict?: string } {
  const lines = markdown.split('\n');
  let last = -1;
  lines.forEach((l, i) => {
    if (l.startsWith('|')) last = i;
  });
  const notes: string[] = [];
  let verdict: string | undefined;
  for (const line of lines.slice(last + 1)) {
    if (/^\*\*.+\*\*$/.test(line)) verdict = plainNote(line.slice(2, -2));
    else if (line.startsWith('- ')) notes.push(plainNote(line.slice(2)));
    // A nested item (a replica under its row's "replicas in …" note) stays marked as part of the note above it.
    else if (/^\s+- /.test(line)) notes.push(`↳ ${plainNote(line.replace(/^\s+- /, ''))}`);
    else if (line.trim() !== '') notes.push(plainNote(line));
  }
  return { notes, ...(verdict !== undefined ? { verdict } : {}) };
}

/** How the run was made, as a command line (argv from manifest.json, secrets redacted) or what is known of it. */
export function commandLine(manifest: Record<string, unknown> | null): string {
  if (!manifest) return '(no manifest.json in this folder)';
  const safe = redactJson(manifest) as Record<string, unknown>;
  if (Array.isArray(safe['argv'])) return `inferbench ${shellJoin(safe['argv'] as string[])}`;
  const source = safe['source'] as { tool?: unknown; version?: unknown; file?: unknown } | undefined;
  if (source && typeof source.tool === 'string') {
    return `imported from ${String(source.file ?? '?')} (${source.tool}${source.version ? ` ${String(source.version)}` : ''})`;
  }
  const command = typeof safe['command'] === 'string' ? safe['command'] : 'run';
  return `inferbench ${command} … (the exact command line was not saved with this run; its options are in manifest.json below)`;
}

function metadata(entry: CatalogEntry & { run: StoredRun }): [string, string][] {
  const { summary: s } = entry.run;
  const c = s.context;
  const t = s.target;
  const pairs: [string, string][] = [
    ['Run id', entry.id],
    ['Folder', entry.dir],
    ['Created', s.createdAt],
    ['Finished', s.finishedAt],
    ['Model', c.model],
    ['Engine', `${c.engine}${c.engineVersion ? ` ${c.engineVersion}` : ''}`],
    ['GPU', c.gpu ? `${c.gpus ?? 1}× ${c.gpu}` : '—'],
    ['Quantization', c.quant ?? '—'],
    ['Label', c.label ?? ''],
    ['Target', t.url ?? (t.simulated ? 'built-in simulator' : t.api)],
    ['API', t.api],
    ['Detected', t.detection ?? ''],
    ['Profile', `${s.profile} (${s.layout})`],
    ['Workload', s.workload],
    ['Tool', entry.row.tool === s.tool.name ? `${s.tool.name} ${s.tool.version}` : `${entry.row.tool} (imported with ${s.tool.name} ${s.tool.version})`],
  ];
  if (s.interrupted) pairs.push(['Interrupted', 'yes: the last row covers only the requests finished before the stop']);
  return pairs.filter(([, v]) => v !== '');
}

export function runView(entry: CatalogEntry & { run: StoredRun }): RunView {
  const run = entry.run;
  const bundle = buildReportBundle([run], toolVersion());
  const section = bundle.sections[0];
  // The report's markdown: the notes under the table, and for an imported run how its figures were mapped.
  const foot = tableFoot(bundle.markdown);
  const health = (run.summary as { health?: Parameters<typeof healthLine>[0] }).health;
  return {
    row: entry.row,
    heading: section ? plainHeading(section.heading) : '',
    table: section?.table ?? { headers: [], rows: [] },
    notes: [...run.summary.notes, ...foot.notes],
    ...(foot.verdict !== undefined ? { capacityVerdict: foot.verdict } : {}),
    windowRules: run.summary.windowRules,
    ...(health ? { healthLine: healthLine(health) } : {}),
    charts: bundle.charts.map(chartJson),
    metadata: metadata(entry),
    command: commandLine(entry.manifest),
    manifest: entry.manifest ? (redactJson(entry.manifest) as Record<string, unknown>) : null,
    warnings: run.warnings,
    hasRequests: existsSync(join(entry.dir, 'requests.jsonl')),
    hasTelemetry: existsSync(join(entry.dir, 'telemetry.jsonl')),
    hasPower: existsSync(join(entry.dir, 'power.jsonl')),
  };
}

/** Values kept per row and metric for the histograms, and points kept for the TTFT-over-time scatter. */
export const HISTOGRAM_LIMIT = 2000;
export const SCATTER_LIMIT = 3000;

/** requests.jsonl is read once per version of the file (size and time), however often the page is opened. */
const detailsCache = new Map<string, { stamp: string; details: Promise<RunDetails> }>();

function cachedDetails(dir: string): Promise<RunDetails> {
  const path = join(dir, 'requests.jsonl');
  let stamp = 'none';
  try {
    const st = statSync(path);
    stamp = `${st.mtimeMs}:${st.size}`;
  } catch {
    // no requests.jsonl: an empty view
  }
  const hit = detailsCache.get(dir);
  if (hit && hit.stamp === stamp) return hit.details;
  const details = readRunDetails(dir, { perRowLimit: HISTOGRAM_LIMIT, pointLimit: SCATTER_LIMIT });
  detailsCache.set(dir, { stamp, details });
  if (detailsCache.size > 64) detailsCache.delete(detailsCache.keys().next().value as string);
  return details;
}

/**
 * Per-request distributions one row at a time, as the HTML report draws them: every row's sampled values are in
 * each histogram's data and its `row` signal (set by the page's row picker) keeps one row's — never every row
 * pooled, which would describe no load point. The TTFT scatter keeps every row, one colour each.
 */
export async function requestsView(entry: CatalogEntry & { run: StoredRun }): Promise<RequestsView> {
  const d = await cachedDetails(entry.dir);
  const run = entry.run;
  const name = entry.row.series;
  const rows = orderedStages(run)
    .filter((s) => d.perRow.has(s.index))
    .map((s) => ({ key: rowKey(0, s.index), label: rowMarks(s), requests: s.requests.ok }));
  const firstKey = rows[0]?.key ?? '';
  const labels = new Map(run.summary.stages.map((s) => [s.index, s.label]));
  const points = d.points
    .filter((x): x is typeof x & { ttftMs: number } => x.ttftMs !== undefined)
    .sort((a, b) => a.tS - b.tS)
    .map((x) => ({ t: x.tS, ttftMs: x.ttftMs, row: labels.get(x.stage) ?? `row ${x.stage + 1}`, order: x.stage }));
  return {
    total: d.total,
    ok: d.ok,
    errors: [...d.errors.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20),
    badLines: d.badLines,
    sampled: d.sampled,
    rows,
    firstRow: firstKey,
    histograms: rows.length ? rowHistograms([d], firstKey, runsSlo([run])).map(chartJson) : [],
    ...(points.length ? { scatter: ttftScatter(points, `${name} — successful measured requests${d.sampled ? ', a seeded sample' : ''}`, RUN_TIME_AXIS) } : {}),
  };
}

/**
 * The server's gauges (telemetry.jsonl) and the GPUs' power (power.jsonl) over the run, on the HTML report's time axis:
 * seconds from the run's first request, the zero of the TTFT scatter too.
 */
export async function telemetryView(entry: CatalogEntry & { run: StoredRun }): Promise<TelemetryView> {
  const path = join(entry.dir, 'telemetry.jsonl');
  const samples: TelemetrySample[] = [];
  const lines = existsSync(path) ? readFileSync(path, 'utf8').split('\n') : [];
  const power = readPowerSeries(entry.dir);
  if (lines.length === 0 && power.length === 0) return { samples: 0, charts: [] };
  for (const line of lines) {
    if (line.trim() === '') continue;
    try {
      const s = JSON.parse(line) as Partial<TelemetrySample>;
      if (typeof s.atMs === 'number') samples.push({ ...s, atMs: s.atMs, stage: typeof s.stage === 'number' ? s.stage : 0 });
    } catch {
      // a torn last line of a killed run
    }
  }
  const labels = new Map(entry.run.summary.stages.map((s) => [s.index, s.label]));
  // No requests.jsonl (--records none): the first reading stands in for the first request.
  const firstSend = (await cachedDetails(entry.dir)).firstSendMs;
  const zeroMs = Number.isFinite(firstSend) ? firstSend : Math.min(...samples.map((x) => x.atMs), ...power.map((x) => x.atMs));
  const powerPoints = power.map(({ atMs, ...p }) => ({ ...p, tS: (atMs - zeroMs) / 1000 })).filter((p) => p.tS >= 0);
  return {
    samples: samples.length,
    charts: [...telemetryCharts(samples, labels, zeroMs), ...powerCharts([entry.row.series], [powerPoints]).map(chartJson)],
  };
}

/** `inferbench compare` for the runs ticked on the Runs page, in the order ticked (the first is the baseline). */
export function compareView(entries: readonly (CatalogEntry & { run: StoredRun })[], allowMismatch: boolean): CompareView {
  const runs = entries.map((e) => e.run);
  if (runs.length < 2) throw configError('tick at least two runs to compare');
  const oneLayout = new Set(runs.map((r) => r.summary.layout)).size === 1;
  const mismatches = oneLayout ? runMismatches(runs).map(mismatchText) : [];
  if (mismatches.length > 0 && !allowMismatch) {
    throw Object.assign(configError(`these runs are not comparable — they differ in ${mismatches.join('; ')}`, 'compare runs of one model, workload, profile and window rules, or compare them anyway'), {
      canAllow: true,
    });
  }
  const bundle = buildCompareBundle(runs, mismatches.length ? { mismatches } : {}, toolVersion());
  const skip = new Set([...(bundle.verdict?.lines ?? []), ...(bundle.capacityRanking?.lines ?? [])].map((l) => `- ${l}`));
  const headings = new Set(bundle.sections.flatMap((s) => s.heading.split('\n')));
  const notes = bundle.markdown
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('|') && !l.startsWith('#') && !skip.has(l) && !headings.has(l))
    .map((l) => plainNote(l.replace(/^- /, '')));
  return {
    title: bundle.title,
    names: bundle.names,
    sections: bundle.sections.map((s) => ({ heading: plainHeading(s.heading), table: s.table })),
    ...(bundle.verdict ? { verdict: { table: bundle.verdict.table, lines: [...bundle.verdict.lines] } } : {}),
    ...(bundle.capacityRanking ? { capacityRanking: { table: bundle.capacityRanking.table, lines: [...bundle.capacityRanking.lines] } } : {}),
    charts: bundle.charts.map(chartJson),
    mismatches,
    notes: [...new Set(notes)],
  };
}
