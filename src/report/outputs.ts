import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { configError } from '../core/errors.js';
import type { StoredRun } from '../store/run-store.js';
import { readPowerSeries, readRunDetails, readTelemetry } from '../store/run-details.js';
import type { Slo } from '../metrics/summary.js';
import type { SampleRequestText } from './html-sections.js';
import type { ChartDef } from './charts/specs.js';
import { specToSvg, svgToPng } from './charts/render.js';
import { renderHtml } from './html.js';
import { llmdReports } from '../interop/llmd.js';
import type { Table } from './table.js';

export const REPORT_FORMATS = ['md', 'csv', 'json', 'html', 'png', 'svg', 'llmd'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export function parseFormats(raw: string): ReportFormat[] {
  const parts = raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  const bad = parts.filter((p) => !(REPORT_FORMATS as readonly string[]).includes(p));
  if (bad.length || parts.length === 0) {
    throw configError(`--format ${JSON.stringify(raw)}: unknown format ${bad.map((b) => `"${b}"`).join(', ') || '(empty)'}`, `choose from ${REPORT_FORMATS.join(',')}`);
  }
  return [...new Set(parts)] as ReportFormat[];
}

/** Everything `report` or `compare` can write, built once from the runs. */
export interface ReportBundle {
  kind: 'report' | 'compare';
  /** File name stem of the .md/.json/.html written (default: kind); `inferbench matrix` writes matrix.md/.html. */
  file?: string;
  title: string;
  runs: StoredRun[];
  names: string[];
  markdown: string;
  /**
   * Heading and table per run or comparison section; `notes`: the lines the Markdown and the terminal print under
   * it (runNoteLines), `answer`: a capacity run's answer, printed in bold under its table.
   */
  sections: { heading: string; table: Table; notes?: string[]; answer?: string }[];
  /** Lines under all the tables (compare's legend, the definitions note of imported runs). */
  notes?: string[];
  verdict?: { table: Table; lines: string[] };
  /** `compare` of capacity runs: the ranking by capacity, per GPU and per $ (capacity-rank.ts). */
  capacityRanking?: { table: Table; lines: string[] };
  csv: { file: string; text: string }[];
  json: object;
  charts: ChartDef[];
  /** SLO limits the charts draw (compare --slo, else the runs' own). */
  slo?: Slo;
  toolVersion: string;
}

/** A folder to write output files into (made if missing), remembering every path written. */
export function outputFolder(outDir: string): { dir: string; put(file: string, data: string | Buffer): void; written: string[] } {
  const dir = resolve(outDir);
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  return {
    dir,
    written,
    put(file, data) {
      writeFileSync(join(dir, file), data);
      written.push(join(dir, file));
    },
  };
}

/** Writes the asked formats under outDir; returns the paths written. */
export async function writeBundle(bundle: ReportBundle, formats: readonly ReportFormat[], outDir: string): Promise<string[]> {
  const { put, written } = outputFolder(outDir);
  const stem = bundle.file ?? bundle.kind;
  if (formats.includes('md')) put(`${stem}.md`, bundle.markdown);
  if (formats.includes('csv')) for (const c of bundle.csv) put(c.file, c.text);
  if (formats.includes('json')) put(`${stem}.json`, `${JSON.stringify({ schemaVersion: 1, ...bundle.json }, null, 2)}\n`);
  // llm-d benchmark report v0.2: one file per row of every run (llmd.ts).
  if (formats.includes('llmd')) for (const run of bundle.runs) for (const r of llmdReports(run)) put(r.file, `${JSON.stringify(r.doc, null, 2)}\n`);
  if (formats.includes('png') || formats.includes('svg')) {
    for (const chart of bundle.charts) {
      const svg = await specToSvg(chart.spec);
      if (formats.includes('svg')) put(`${chart.name}.svg`, svg);
      if (formats.includes('png')) put(`${chart.name}.png`, await svgToPng(svg));
    }
  }
  if (formats.includes('html')) {
    const details = await Promise.all(bundle.runs.map((r) => readRunDetails(r.dir)));
    // telemetry.jsonl is on the run's clock: placed on the same time axis as the requests.
    // Samples from before the first request (prompt calibration, the idle check) are left out.
    const telemetry = bundle.runs.map((r, i) =>
      readTelemetry(r.dir)
        .map(({ atMs, ...p }) => ({ ...p, tS: (atMs - (details[i]?.firstSendMs ?? atMs)) / 1000 }))
        .filter((p) => p.tS >= 0),
    );
    const power = bundle.runs.map((r, i) =>
      readPowerSeries(r.dir)
        .map(({ atMs, ...p }) => ({ ...p, tS: (atMs - (details[i]?.firstSendMs ?? atMs)) / 1000 }))
        .filter((p) => p.tS >= 0),
    );
    const html = await renderHtml({
      title: bundle.title,
      runs: bundle.runs,
      names: bundle.names,
      sections: bundle.sections,
      ...(bundle.notes ? { tableNotes: bundle.notes } : {}),
      ...(bundle.verdict ? { verdict: bundle.verdict } : {}),
      ...(bundle.capacityRanking ? { capacityRanking: bundle.capacityRanking } : {}),
      charts: bundle.charts,
      details,
      telemetry,
      power,
      sampleTexts: bundle.runs.map((r) => readSampleTexts(r.dir)),
      ...(bundle.slo ? { slo: bundle.slo } : {}),
      generatedAt: new Date().toISOString(),
      toolVersion: bundle.toolVersion,
    });
    put(`${stem}.html`, html);
  }
  return written;
}

/** `inferbench-reports/20261122-071500-compare`: next to the results, never inside a run folder. */
export function defaultReportDir(kind: 'report' | 'compare', date = new Date()): string {
  const stamp = date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return join('inferbench-reports', `${stamp}-${kind}`);
}

/** sample-requests.json of a run folder (cli/sample-requests.ts), when there is a readable one. */
function readSampleTexts(dir: string): SampleRequestText[] | undefined {
  const path = join(dir, 'sample-requests.json');
  if (!existsSync(path)) return undefined;
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as { requests?: unknown };
    return Array.isArray(doc.requests) ? (doc.requests as SampleRequestText[]).filter((r) => typeof r?.prompt === 'string') : undefined;
  } catch {
    return undefined;
  }
}
