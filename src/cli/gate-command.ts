import { appendFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configError } from '../core/errors.js';
import { gateRuns, renderGateJunit, renderGateMarkdown, renderGateText, thresholdsOrThrow, verdictLine, type GateReport, type Threshold } from '../gate/index.js';
import { DEFAULT_RESULTS_DIR, openRunDir, resolveRun, type StoredRun } from '../store/run-store.js';

type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

/** `inferbench gate`'s flags as commander hands them over (and the subset `run --gate-against` shares). */
export interface GateFlags {
  baseline?: string;
  candidate?: string;
  maxRegression?: string;
  inconclusive?: 'pass' | 'fail';
  markdown?: string;
  junit?: string;
  json?: boolean;
  results?: string;
  seed?: string;
  allowMismatch?: boolean;
}

/** "a,b" → the runs, each resolved as every command resolves a RUN (folder, name, id or id prefix). */
function openSide(flag: string, list: string | undefined, results: string | undefined): StoredRun[] {
  const refs = (list ?? '').split(',').map((r) => r.trim()).filter((r) => r !== '');
  if (refs.length === 0) throw configError(`${flag} needs at least one run`, `${flag} RUN[,RUN…] (run ids from \`inferbench ls\`, or run folders)`);
  return refs.map((ref) => resolveRun(ref, results ?? DEFAULT_RESULTS_DIR));
}

/** What gating needs before anything runs: the thresholds and the baseline's runs (so `run --gate-against` fails early). */
export function prepareGate(flags: GateFlags, baselineFlag = '--baseline'): { thresholds: Threshold[]; baseline: StoredRun[] } {
  const thresholds = thresholdsOrThrow(flags.maxRegression);
  return { thresholds, baseline: openSide(baselineFlag, flags.baseline, flags.results) };
}

function seedOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw configError(`--seed ${raw} is not a whole number`, 'e.g. --seed 1');
  return Number(raw);
}

function writeOut(path: string, text: string, what: string): void {
  try {
    // $GITHUB_STEP_SUMMARY collects a job step's summary: add to it rather than replace what the step wrote before.
    if (process.env['GITHUB_STEP_SUMMARY'] !== undefined && resolve(path) === resolve(process.env['GITHUB_STEP_SUMMARY'])) appendFileSync(path, text);
    else writeFileSync(path, text);
  } catch (err) {
    throw configError(`cannot write the ${what} file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, 'give a path in a folder that exists and can be written');
  }
}

/** Prints and writes a gate report; returns its exit code. */
export function emitGate(report: GateReport, flags: GateFlags, io: Io, opts: { jsonToStdout: boolean }): number {
  if (flags.markdown !== undefined) writeOut(flags.markdown, renderGateMarkdown(report), 'Markdown');
  if (flags.junit !== undefined) writeOut(flags.junit, renderGateJunit(report), 'JUnit');
  if (opts.jsonToStdout) {
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    io.stderr.write(`gate: ${verdictLine(report)}\n`);
  } else io.stdout.write(renderGateText(report));
  return report.exitCode;
}

/** Gates candidate runs against the prepared baseline. */
export async function gateWith(prepared: ReturnType<typeof prepareGate>, candidate: StoredRun[], flags: GateFlags): Promise<GateReport> {
  const seed = seedOf(flags.seed);
  return gateRuns(prepared.baseline, candidate, {
    thresholds: prepared.thresholds,
    ...(flags.inconclusive ? { inconclusive: flags.inconclusive } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(flags.allowMismatch ? { allowMismatch: true } : {}),
  });
}

/** `inferbench gate --baseline RUN[,RUN…] --candidate RUN[,RUN…]`: exit 0 pass, 1 fail, 3 inconclusive, 2 usage. */
export async function gateCommand(flags: GateFlags, io: Io): Promise<number> {
  const prepared = prepareGate(flags);
  const candidate = openSide('--candidate', flags.candidate, flags.results);
  for (const r of [...prepared.baseline, ...candidate]) for (const w of r.warnings) io.stderr.write(`warning: ${r.name}: ${w}\n`);
  const report = await gateWith(prepared, candidate, flags);
  return emitGate(report, flags, io, { jsonToStdout: flags.json === true });
}

/** `run … --gate-against RUN[,RUN…]`: the run just written, gated; the run's --json keeps stdout, the gate goes to stderr. */
export async function gateRunFolder(dir: string, prepared: ReturnType<typeof prepareGate>, flags: GateFlags, runJson: boolean, io: Io): Promise<number> {
  const report = await gateWith(prepared, [openRunDir(dir)], flags);
  if (flags.markdown !== undefined) writeOut(flags.markdown, renderGateMarkdown(report), 'Markdown');
  if (flags.junit !== undefined) writeOut(flags.junit, renderGateJunit(report), 'JUnit');
  (runJson ? io.stderr : io.stdout).write(`\n${renderGateText(report)}`);
  return report.exitCode;
}

/**
 * `run`'s gate flags: undefined without --gate-against (then the other gate flags are refused: they mean nothing
 * alone); else the prepared baseline and what to do once the run has finished.
 */
export async function runGateFlags(raw: Record<string, unknown>): Promise<{ after(outcome: { exitCode: number; dir?: string }, runJson: boolean, io: Io): Promise<number> } | undefined> {
  const str = (k: string): string | undefined => (typeof raw[k] === 'string' ? (raw[k] as string) : undefined);
  const flags: GateFlags = {
    baseline: str('gateAgainst'),
    maxRegression: str('maxRegression'),
    markdown: str('markdown'),
    junit: str('junit'),
    ...(str('inconclusive') ? { inconclusive: str('inconclusive') as 'pass' | 'fail' } : {}),
  };
  if (flags.baseline === undefined) {
    const alone = ['maxRegression', 'inconclusive', 'markdown', 'junit'].filter((k) => raw[k] !== undefined);
    if (alone.length > 0) {
      const names = alone.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ');
      throw configError(`${names} go${alone.length === 1 ? 'es' : ''} with --gate-against RUN[,RUN…]`, 'add --gate-against with the baseline runs, or use `inferbench gate` on saved runs');
    }
    return undefined;
  }
  const prepared = prepareGate(flags, '--gate-against');
  return {
    async after(outcome, runJson, io) {
      if (outcome.exitCode !== 0 || outcome.dir === undefined) {
        io.stderr.write(`gate: not gated: the run ended with exit ${outcome.exitCode}\n`);
        return outcome.exitCode;
      }
      return gateRunFolder(outcome.dir, prepared, flags, runJson, io);
    },
  };
}
