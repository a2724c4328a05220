import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { configError } from '../core/errors.js';
import { importAiperf, isAiperfRecord, isAiperfSummary } from './aiperf.js';
import { importGenaiBench, isGenaiMetadata, isGenaiRunFile } from './genai-bench.js';
import { importGuidellm, isGuidellm } from './guidellm.js';
import { readSourceInput } from './read-input.js';
import { importSglang, isSglangLine } from './sglang.js';
import { isObj, type FileInput, type ImportedRun, type Obj, type SourceInput } from './types.js';
import { importVllm, isVllmResult } from './vllm.js';

export const KNOWN_FORMATS =
  'GuideLLM benchmarks.json, vLLM bench serve --save-result JSON, SGLang bench_serving JSONL, AIPerf profile_export_aiperf.json (or its artifact folder), a genai-bench experiment folder';

const docs = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);
const valuesOf = (f: FileInput): unknown[] => (f.kind === 'json' ? docs(f.value) : f.values);

/** AIPerf's per-record lines in the summary's folder (profile_export.jsonl, or any JSONL of records there). */
function aiperfRecordsBeside(summaryPath: string, files?: readonly FileInput[]): Obj[] {
  let candidates = files;
  if (!candidates) {
    const dir = dirname(summaryPath);
    const names = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.jsonl')) : [];
    candidates = names.flatMap((n) => {
      try {
        const parsed = readSourceInput(join(dir, n));
        return parsed.kind === 'dir' ? [] : [parsed];
      } catch {
        return [];
      }
    });
  }
  for (const f of candidates) {
    const lines = valuesOf(f);
    if (lines.length > 0 && lines.every(isAiperfRecord)) return lines as Obj[];
  }
  return [];
}

/** genai-bench's experiment_metadata.json beside a run file, when it is there. */
function genaiMetadataBeside(runPath: string): Obj | undefined {
  const path = join(dirname(runPath), 'experiment_metadata.json');
  if (!existsSync(path)) return undefined;
  const parsed = readSourceInput(path);
  return parsed.kind === 'json' && isGenaiMetadata(parsed.value) ? (parsed.value as Obj) : undefined;
}

function fromFile(input: FileInput, file: string): ImportedRun | undefined {
  const values = valuesOf(input);
  const one = values.length === 1 ? values[0] : undefined;
  if (one !== undefined && isGuidellm(one)) return importGuidellm(one as Obj, file);
  if (one !== undefined && isAiperfSummary(one)) return importAiperf(one, aiperfRecordsBeside(input.path), file);
  if (one !== undefined && isGenaiRunFile(one)) return importGenaiBench(genaiMetadataBeside(input.path), [one], file);
  if (values.length > 0 && values.every(isVllmResult)) return importVllm(values as Obj[], file);
  if (values.length > 0 && values.every(isSglangLine)) return importSglang(values as Obj[], file);
  if (values.length > 0 && values.every(isAiperfRecord)) {
    throw configError(`${input.path} is AIPerf's per-record file`, "import profile_export_aiperf.json (or the artifact folder): the per-record lines beside it are read with it");
  }
  if (one !== undefined && isGenaiMetadata(one)) {
    throw configError(`${input.path} is genai-bench's experiment_metadata.json`, 'import the experiment folder that holds it');
  }
  return undefined;
}

function fromDir(input: Extract<SourceInput, { kind: 'dir' }>, file: string): ImportedRun | undefined {
  const all = input.files.flatMap((f) => valuesOf(f).map((value) => ({ f, value })));
  const summary = all.find((x) => isAiperfSummary(x.value));
  if (summary) return importAiperf(summary.value as Obj, aiperfRecordsBeside(summary.f.path, input.files), file);
  const runs = all.filter((x) => isGenaiRunFile(x.value)).map((x) => x.value as Obj);
  if (runs.length) return importGenaiBench(all.find((x) => isGenaiMetadata(x.value))?.value as Obj | undefined, runs, file);
  const single = input.files.find((f) => fromFileSafe(f));
  if (single) throw configError(`${input.path} is a folder`, `pass the result file itself, e.g. ${join(input.path, basename(single.path))}`);
  return undefined;
}

function fromFileSafe(f: FileInput): boolean {
  try {
    return fromFile(f, f.path) !== undefined;
  } catch {
    return false;
  }
}

/**
 * Reads one input (file or folder), tells its tool from its content (never its name) and maps it. Every
 * problem is one E_CONFIG line that names the input and says what to do.
 */
export function importSource(path: string): ImportedRun {
  const file = resolve(path);
  const input = readSourceInput(path);
  const run = input.kind === 'dir' ? fromDir(input, file) : fromFile(input, file);
  if (!run) {
    const what = input.kind === 'dir' ? 'a folder with no result file inferbench can import' : `not a result file inferbench can import${isObj(input.kind === 'json' ? input.value : undefined) ? '' : ' (its top level is not a JSON object)'}`;
    throw configError(`${path}: ${what}`, `known formats: ${KNOWN_FORMATS} (docs/import.md)`);
  }
  if (run.summary.stages.length === 0) throw configError(`${path}: the ${run.source.tool} file holds no benchmark`, 'export a run that finished at least one benchmark');
  return run;
}
