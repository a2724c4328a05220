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

/**
 * The definitions note printed under `compare` and `report` tables when a run was imported from another tool:
 * how its figures were mapped onto inferbench's, and which were left out (shown as —), run by run.
 */
export function definitionLines(runs: readonly StoredRun[], names: readonly string[]): string[] {
  const imported = runs.map((r, i) => ({ r, name: names[i] ?? r.id, source: importedSource(r) })).filter((x) => x.source !== undefined);
  if (imported.length === 0) return [];
  const lines = [
    "Definitions: imported runs are mapped onto inferbench's definitions — TTFT to the first chunk with text; ITL = (last − first token chunk)/(N − 1) per request (vLLM's TPOT, GuideLLM's and AIPerf's ITL); chunk gap = vLLM's and SGLang's ITL; request latency to the end of the stream. A figure a tool defines otherwise is left out (—), never relabelled; each run's summary.json notes say how every figure was mapped (docs/import.md).",
  ];
  for (const { r, name, source } of imported) {
    const out = leftOut(r);
    lines.push(`${name}: imported from ${source?.tool} ${source?.version === 'unknown' ? '(version not recorded)' : source?.version} (${basename(source?.file ?? '')})${out.length ? `; left out: ${out.join(', ')}` : ''}; ${r.summary.windowRules}.`);
  }
  return lines;
}
