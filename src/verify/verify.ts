/**
 * `plan --verify N`: launch the plan's top N candidates one after another, measure each one's capacity under the
 * plan's SLO with the capacity profile (the run path, into a run folder), stop the server, and set what was
 * measured beside what was predicted. A candidate that fails to start or to run is recorded with its reason and the
 * others go on; Ctrl-C stops the current server and measures no further candidate. No server outlives its turn:
 * every launch is stopped in a `finally`, and src/launch kills any group still up when node exits.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, launchServer, LaunchError, type LaunchedServer } from '../launch/server-process.js';
import type { PlanCandidate, PlanResult } from '../plan/types.js';
import { CELL_RUN_DIR } from '../store/nested-runs.js';
import { measuredRanking } from './rank.js';
import { candidateName, serverCommand, shellWord } from './server-command.js';
import type { MeasureCapacity, VerificationEntry, VerifyResult, VerifySettings } from './types.js';

export interface VerifyDeps {
  measure: MeasureCapacity;
  /** Progress lines (one per step). */
  say: (line: string) => void;
  /** Ctrl-C: stop the current candidate and measure no more. */
  signal: AbortSignal;
  kvCacheDtype?: string;
}

/**
 * verify.json, the verify folder's index: the candidates so far, written before the first launch and after each
 * candidate (a verify stopped halfway keeps what it measured, and the run store knows the folder's runs as cells'
 * runs from the start: store/nested-runs.ts), and once more at the end in measured order.
 */
export function writeVerifyFile(dir: string, v: Pick<VerifyResult, 'entries' | 'precisionPct' | 'interrupted' | 'notes'>): void {
  writeFileSync(join(dir, 'verify.json'), `${JSON.stringify({ verifications: v.entries, precisionPct: v.precisionPct, interrupted: v.interrupted, notes: v.notes }, null, 2)}\n`);
}

export async function verifyPlan(plan: PlanResult, settings: VerifySettings, deps: VerifyDeps): Promise<VerifyResult> {
  const top = plan.candidates.filter((c) => c.feasible).slice(0, settings.count);
  const precisionPct = settings.precisionPct;
  mkdirSync(settings.dir, { recursive: true });
  const entries: VerificationEntry[] = [];
  const notes: string[] = [];
  if (top.length < settings.count) notes.push(`--verify ${settings.count}: the plan has ${top.length} feasible candidate${top.length === 1 ? '' : 's'}, each launched`);
  writeVerifyFile(settings.dir, { entries, precisionPct, interrupted: false, notes });
  for (const [i, c] of top.entries()) {
    if (deps.signal.aborted) break;
    deps.say(`verify ${i + 1}/${top.length}: ${describe(c)} — predicted ${c.capacityPerReplica?.toFixed(2)} req/s per replica`);
    entries.push(await verifyOne(plan, c, i + 1, settings, deps, precisionPct));
    writeVerifyFile(settings.dir, { entries, precisionPct, interrupted: deps.signal.aborted, notes });
  }
  const interrupted = deps.signal.aborted;
  if (interrupted) notes.push(`interrupted (Ctrl-C): ${top.length - entries.filter((e) => e.status !== 'interrupted').length} of ${top.length} candidates not measured to the end`);
  return { entries: measuredRanking(entries, plan), dir: settings.dir, precisionPct, interrupted, notes };
}

function describe(c: PlanCandidate): string {
  return `${c.gpus}× ${c.gpu} ${c.quant} ${c.engine}`;
}

async function verifyOne(plan: PlanResult, c: PlanCandidate, index: number, settings: VerifySettings, deps: VerifyDeps, precisionPct: number): Promise<VerificationEntry> {
  const name = `${index}-${candidateName(c)}`;
  const dir = join(settings.dir, name);
  mkdirSync(dir, { recursive: true });
  const runDir = join(dir, CELL_RUN_DIR);
  const serverLog = join(dir, 'server.log');
  const metadata = ['--gpu', c.gpu, '--gpus', String(c.gpus), '--quant', c.quant, '--label', `verify ${name}`];
  const runArgs = [...settings.runArgs, '--profile', 'capacity', '--out', runDir, ...metadata];
  const entry: VerificationEntry = {
    candidate: { gpu: c.gpu, gpus: c.gpus, quant: c.quant, engine: c.engine, planRank: c.rank as number, replicas: c.replicas, costPerHour: c.costPerHour, gpuHourPrice: c.gpuHourPrice },
    status: 'run-failed',
    predictedCapacity: c.capacityPerReplica as number,
    measuredCapacity: null,
    differencePct: null,
    precisionPct,
    withinPrecision: null,
    command: '',
    runCommand: `inferbench run --target URL ${runArgs.map(shellWord).join(' ')}`,
    dir,
    runDir: null,
    serverLog,
  };
  let server: LaunchedServer | undefined;
  try {
    const port = await freePort();
    entry.command = serverCommand(settings.server, plan.model, c, deps.kvCacheDtype, port);
    deps.say(`  starting: ${entry.command}`);
    server = await launchServer(
      { name, command: entry.command, port, logPath: serverLog, readyTimeoutMs: settings.readyTimeoutMs, stopTimeoutMs: settings.stopTimeoutMs },
      deps.signal,
    );
    entry.startupSeconds = server.startupSeconds;
    entry.firstRequestMs = server.firstRequestMs;
    if (server.pid !== undefined) entry.pid = server.pid;
    deps.say(`  ready in ${server.startupSeconds.toFixed(1)} s (first request ${server.firstRequestMs.toFixed(0)} ms); measuring capacity into ${runDir}`);
    const measured = await deps.measure(['--target', server.url, ...runArgs], deps.signal);
    entry.runDir = runDir;
    const cap = measured.capacity;
    if (measured.interrupted) entry.status = 'interrupted';
    if (cap) {
      entry.verdict = cap.verdict;
      entry.measuredFirstBreach = cap.firstBreach;
      if (cap.feasibleMax !== null && cap.feasibleMax > 0) {
        entry.measuredCapacity = cap.feasibleMax;
        entry.differencePct = (cap.feasibleMax / entry.predictedCapacity - 1) * 100;
        entry.withinPrecision = Math.abs(entry.differencePct) <= precisionPct + 1e-9;
        if (!measured.interrupted) entry.status = 'ok';
      } else if (!measured.interrupted) {
        entry.status = 'no-capacity';
        entry.error = cap.verdict;
      }
    } else if (!measured.interrupted) {
      entry.error = `the capacity run exited ${measured.exitCode} without a capacity answer (see ${runDir})`;
    }
  } catch (err) {
    if (err instanceof LaunchError) {
      entry.status = err.interrupted ? 'interrupted' : err.status;
      entry.error = err.message;
      entry.logTail = err.logTail;
    } else {
      entry.status = deps.signal.aborted ? 'interrupted' : 'run-failed';
      entry.error = err instanceof Error ? err.message : String(err);
    }
    deps.say(`  ${entry.status}: ${entry.error}${entry.logTail ? `\n  server log (last lines):\n${entry.logTail.replace(/^/gm, '    ')}` : ''}`);
  } finally {
    if (server) {
      const stopped = await server.stop();
      entry.portFree = stopped.portFree;
      deps.say(`  stopped${stopped.portFree ? '' : ' (its port still answers)'}`);
    }
  }
  return entry;
}
