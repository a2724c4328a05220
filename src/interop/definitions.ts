import { basename } from 'node:path';
import type { StoredRun } from '../store/run-store.js';

/** The source of a run imported by `inferbench import` (manifest.json `source`), or undefined for a measured run. */
export function importedSource(run: StoredRun): { tool: string; version: string; file: string } | undefined {
  const source = (run.manifest as { source?: unknown } | undefined)?.source;
  if (typeof source !== 'object' || source === null) return undefined;
  const { tool, version, file } = source as Record<string, unknown>;
  return typeof tool === 'string' ? { tool, version: typeof version === 'string' ? version : 'unknown', file: typeof file === 'string' ? file : '' } : undefined;
}

/** What an imported run left out, from its notes (`left out: WHAT — why`). */
function leftOut(run: StoredRun): string[] {
  return run.summary.notes.flatMap((n) => (n.startsWith('left out: ') ? [n.slice('left out: '.length).split(' — ')[0] ?? ''] : [])).filter(Boolean);
}

/** The note printed once under `compare` and `report` output that holds imported runs. */
export const DEFINITIONS_NOTE =
  "Definitions: imported runs are mapped onto inferbench's definitions — TTFT to the first chunk with text; ITL = (last − first token chunk)/(N − 1) per request (vLLM's TPOT, GuideLLM's and AIPerf's ITL); chunk gap = vLLM's and SGLang's ITL; request latency to the end of the stream. A figure a tool defines otherwise is left out (—), never relabelled; each run's summary.json notes say how every figure was mapped (docs/import.md).";

/** One imported run's line: its tool, what it left out (shown as —) and its window rule; undefined for a measured run. */
export function importedRunLine(run: StoredRun, name: string): string | undefined {
  const source = importedSource(run);
  if (!source) return undefined;
  const out = leftOut(run);
  const version = source.version === 'unknown' ? '(version not recorded)' : source.version;
  return `${name}: imported from ${source.tool} ${version} (${basename(source.file)})${out.length ? `; left out: ${out.join(', ')}` : ''}; ${run.summary.windowRules}.`;
}

/** The definitions note and one line per imported run, for `compare`; empty when no run was imported. */
export function definitionLines(runs: readonly StoredRun[], names: readonly string[]): string[] {
  const lines = runs.flatMap((r, i) => importedRunLine(r, names[i] ?? r.id) ?? []);
  return lines.length ? [DEFINITIONS_NOTE, ...lines] : [];
}
