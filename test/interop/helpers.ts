import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importSource, writeImportedRun } from '../../src/interop/index.js';
import { pythonJsonText } from '../../src/interop/read-input.js';
import { openRunDir, type StoredRun } from '../../src/store/run-store.js';
import { repoRoot } from '../helpers/cli.js';

export const PEER = join(repoRoot, 'test/fixtures/peer-outputs');
export const GUIDELLM = join(PEER, 'guidellm-0.7-llamacpp-c8-n50.json');
export const VLLM = join(PEER, 'vllm-bench-serve-llamacpp-c8-n50.json');
export const SGLANG = join(PEER, 'sglang-bench-serving-llamacpp-c8-n50.jsonl');
export const AIPERF_DIR = join(PEER, 'aiperf-docs-minimal');
export const GENAI_DIR = join(PEER, 'genai-bench-docs-minimal');

/** The source file as the tool wrote it (Python's Infinity read as Infinity). */
export function sourceJson(path: string): Record<string, unknown> {
  return JSON.parse(pythonJsonText(readFileSync(path, 'utf8'))) as Record<string, unknown>;
}

/** Imports one input into a fresh results folder and reads it back through the store, as ls/report/compare do. */
export function importAndOpen(path: string, label?: string): { run: StoredRun; lines: Record<string, unknown>[] } {
  const results = mkdtempSync(join(tmpdir(), 'ib-import-'));
  const imported = importSource(path);
  const { dir } = writeImportedRun(imported, { resultsDir: results, toolVersion: 'test', ...(label !== undefined ? { label } : {}) });
  const run = openRunDir(dir);
  let lines: Record<string, unknown>[] = [];
  try {
    lines = readFileSync(join(dir, 'requests.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    lines = [];
  }
  return { run, lines };
}

/** A figure of a distribution stored under `metrics.<name>.successful` in a GuideLLM benchmark. */
export function guidellmSuccessful(doc: Record<string, unknown>, metric: string): Record<string, number> & { percentiles: Record<string, number> } {
  const b = (doc['benchmarks'] as Record<string, unknown>[])[0] as Record<string, unknown>;
  const m = (b['metrics'] as Record<string, Record<string, unknown>>)[metric] as Record<string, unknown>;
  return m['successful'] as Record<string, number> & { percentiles: Record<string, number> };
}
