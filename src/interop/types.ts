import type { ImportedRecord } from '../results/record.js';
import type { RunSummaryDoc } from '../results/run-summary.js';

/** The tools whose result files `inferbench import` reads (manifest.json `source.tool`). */
export const SOURCE_TOOLS = ['guidellm', 'vllm-bench-serve', 'sglang-bench-serving', 'aiperf', 'genai-bench'] as const;
export type SourceTool = (typeof SOURCE_TOOLS)[number];

/** Where an imported run came from: manifest.json `source`. */
export interface SourceInfo {
  tool: SourceTool;
  /** The tool's version as its file states it, or "unknown" when the file does not say. */
  version: string;
  /** Absolute path of the imported file (or folder). */
  file: string;
}

/** One request of another tool, mapped into the results schema's imported-record form (src/results/record.ts). */
export type { ImportedRecord } from '../results/record.js';

/** What an importer returns: the summary inferbench will store, and the per-request lines when the file has them. */
export interface ImportedRun {
  source: SourceInfo;
  summary: Omit<RunSummaryDoc, 'tool' | 'runId' | 'outDir' | 'health'>;
  records: ImportedRecord[];
}

/** A parsed input: one JSON document, the lines of a JSONL file, or a folder (genai-bench experiments). */
export type SourceInput =
  | { kind: 'json'; path: string; value: unknown }
  | { kind: 'jsonl'; path: string; values: unknown[] }
  | { kind: 'dir'; path: string; files: FileInput[] };

export type FileInput = Extract<SourceInput, { kind: 'json' | 'jsonl' }>;

/** Loose JSON object access: every importer reads untyped files. */
export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const obj = (v: unknown): Obj => (isObj(v) ? v : {});
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
