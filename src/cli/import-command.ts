import { configError, isUserError } from '../core/errors.js';
import { defaultLabel, importSource, writeImportedRun } from '../interop/index.js';
import { DEFAULT_RESULTS_DIR, listRuns, runIdOf } from '../store/run-store.js';
import { checkOutputDir } from './preflight.js';
import { toolVersion } from './version.js';

export interface ImportFlags {
  label?: string;
  out?: string;
  results?: string;
}

type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

/**
 * `inferbench import FILE...`: each file becomes a run folder that `ls`, `report` and `compare` read like a
 * measured run. A bad file costs its own line on stderr and the others are still imported; the exit code is 2
 * when any file could not be imported, so scripts notice.
 */
export function importCommand(files: readonly string[], flags: ImportFlags, io: Io): number {
  if (files.length === 0) throw configError('no file given', 'pass the result files to import, e.g. `inferbench import benchmarks.json`');
  if (flags.out !== undefined && files.length > 1) {
    throw configError(`--out names one run folder, but ${files.length} files were given`, 'import one file per --out, or leave --out out: each file gets its own folder under --results');
  }
  const resultsDir = flags.results ?? DEFAULT_RESULTS_DIR;
  checkOutputDir(flags.out ?? resultsDir, flags.out !== undefined ? '--out' : '--results');
  let imported = 0;
  for (const file of files) {
    try {
      const run = importSource(file);
      const earlier = alreadyImported(resultsDir, run.source.file);
      const { dir, name } = writeImportedRun(run, {
        resultsDir,
        toolVersion: toolVersion(),
        ...(flags.out !== undefined ? { out: flags.out } : {}),
        ...(flags.label !== undefined ? { label: flags.label } : {}),
      });
      const requests = run.summary.stages.reduce((n, s) => n + s.requests.total, 0);
      const rows = run.summary.stages.length;
      io.stdout.write(`imported ${file}: ${defaultLabel(run)}, ${rows} row${rows === 1 ? '' : 's'}, ${requests} requests${run.records.length ? ` (${run.records.length} in requests.jsonl)` : ''} → ${dir} (id ${runIdOf(name)})\n`);
      for (const note of run.summary.notes.filter((n) => n.startsWith('left out: '))) io.stdout.write(`  ${note}\n`);
      // Imported again on purpose (a re-run wrote the same path) or by mistake: either way, say which run it repeats.
      if (earlier) io.stderr.write(`note: ${file} was already imported as ${earlier.id} (${earlier.dir}); this is a second run of it — \`rm -r\` the one you do not want\n`);
      imported++;
    } catch (err) {
      if (!isUserError(err)) throw err;
      io.stderr.write(`error: ${err.message}${err.hint ? ` (${err.hint})` : ''}\n`);
    }
  }
  const failed = files.length - imported;
  if (imported > 0) {
    io.stderr.write(`${imported} of ${files.length} file${files.length === 1 ? '' : 's'} imported; list them with \`inferbench ls${resultsDir === DEFAULT_RESULTS_DIR ? '' : ` --results ${resultsDir}`}\`, compare with \`inferbench compare ID ID --allow-mismatch\`\n`);
  }
  return failed > 0 ? 2 : 0;
}

/** The run under `resultsDir` imported from the same file path, if any (manifest.json source.file). */
function alreadyImported(resultsDir: string, file: string): { id: string; dir: string } | undefined {
  const hit = listRuns(resultsDir).find((r) => r.run?.manifest?.source?.file === file);
  return hit?.run ? { id: hit.run.id, dir: hit.run.dir } : undefined;
}
