/**
 * The resolving half of `inferbench run`: start the built-in simulator where there is no --target, ask the server
 * what it is (GET probes), build the prompts (the server's /tokenize calibration) and turn all of it into a
 * RunPlan. Nothing here sends load. A saved plan (`run --plan`) is not probed again: its server facts and its
 * tokenizer are the ones used.
 */
import type { RunOptions } from '../config/run-options.js';
import { chooseWorkers } from '../distributed/auto-workers.js';
import type { Dialect } from '../dialects/types.js';
import type { PlanWorkload } from '../runplan/execute.js';
import { dialectOf, probeServer } from '../runplan/probe.js';
import { gridDescription } from '../runplan/profile-config.js';
import { planTokenizer, resolveRunPlan, type PlanProbes } from '../runplan/resolve.js';
import type { RunPlan } from '../runplan/schema.js';
import { setupWorkload } from '../runplan/workload-setup.js';
import { isServerTokenizer } from '../workload/server-tokenizer.js';
import type { Tokenizer } from '../workload/tokenizer.js';
import type { EmbeddedSim } from './embedded-sim.js';
import { DEFAULT_SIM } from './defaults.js';
import { unlessStopped } from './run-signals.js';
import { toolVersion } from './version.js';

export interface ResolvedRun {
  plan: RunPlan;
  baseUrl: string;
  dialect: Dialect;
  tokenizer: Tokenizer;
  prompts: PlanWorkload;
  /** Notes the run's summary keeps (a server that cannot force the output length). */
  notes: string[];
  sim?: EmbeddedSim;
}

/**
 * `say`: a line for the user (stdout, or stderr when stdout carries JSON). `saved`: the plan of `run --plan`.
 * `signal`: the run's Ctrl-C, which stops each step at once (run-signals.ts StartupStopped) and says nothing more.
 */
export async function resolveRun(opts: RunOptions, say: (line: string) => void, saved?: RunPlan, signal?: AbortSignal): Promise<ResolvedRun> {
  let baseUrl = opts.target;
  let sim: EmbeddedSim | undefined;
  if (!baseUrl) {
    const { startDefaultSim } = await import('./embedded-sim.js');
    sim = await unlessStopped(startDefaultSim(opts, signal), signal, (late) => void late.close());
    baseUrl = sim.url;
    say(`target: built-in simulator — ${sim.description} at ${sim.url} (pass --target URL to measure a real server)`);
    for (const w of sim.warnings) say(w);
  }
  try {
    return await resolveWith(opts, baseUrl, sim, say, saved, signal);
  } catch (err) {
    await sim?.close();
    throw err;
  }
}

async function resolveWith(opts: RunOptions, baseUrl: string, sim: EmbeddedSim | undefined, say: (line: string) => void, saved?: RunPlan, signal?: AbortSignal): Promise<ResolvedRun> {
  const server = saved?.target.resolved ?? (await unlessStopped(probeServer(opts, baseUrl, sim, signal), signal));
  if (saved?.target.resolved) say(`plan: ${server.detection ?? `${server.engine}, model ${server.model}, speaking ${server.dialect}`} (as resolved when the plan was made)`);
  else if (server.detection !== undefined) say(`detected: ${server.detection}`);
  const dialect = dialectOf(server);
  const notes: string[] = [];
  if (opts.forceLength && !dialect.canForceLength) {
    const note = `${dialect.name} cannot force the output length: the table reports the lengths the server chose`;
    notes.push(note);
    say(`note: ${note}`);
  }
  // A saved plan's prompts are counted by the tokenizer its resolution settled on.
  const tokenizer = saved ? planTokenizer(saved) : opts.workload.tokenizer;
  const setupOpts = tokenizer === opts.workload.tokenizer ? opts : { ...opts, workload: { ...opts.workload, ...(tokenizer !== undefined ? { tokenizer } : {}) } };
  const setup = await unlessStopped(setupWorkload(setupOpts, { baseUrl, engine: server.engine, model: server.model, api: dialect.name }, signal), signal);
  if (setup.warning) say(`note: ${setup.warning}`);
  if (setup.notice) say(setup.notice);
  // A grid's cells have their own lengths: the single-row defaults would mislead.
  say(`prompts: ${opts.profile === 'grid' ? gridDescription(opts) : setup.workload.description}`);
  const choice = opts.workers === 'auto' ? chooseWorkers(opts, setup.workload) : undefined;
  if (choice) say(choice.reason);
  const probes: PlanProbes = {
    toolVersion: saved?.tool.version ?? toolVersion(),
    ...(sim ? { sim: simFacts(opts, sim) } : {}),
    server,
    tokenizer: saved?.tokenizer.resolved ?? tokenizerFacts(setup.tokenizer, opts),
    workloadDescription: setup.workload.description,
    ...(choice ? { workers: choice.workers } : {}),
  };
  return { plan: resolveRunPlan(opts, probes), baseUrl, dialect, tokenizer: setup.tokenizer, prompts: setup, notes, ...(sim ? { sim } : {}) };
}

function simFacts(opts: RunOptions, sim: EmbeddedSim): NonNullable<PlanProbes['sim']> {
  return {
    engine: opts.engine ?? DEFAULT_SIM.engine,
    model: sim.model,
    gpu: sim.gpu,
    gpus: sim.gpus,
    ...(sim.quant ? { quant: sim.quant } : {}),
    ...(sim.kvCacheDtype ? { kvCacheDtype: sim.kvCacheDtype } : {}),
    description: sim.description,
  };
}

/** The tokenizer the prompts were counted with, as the plan records it (a plan run uses the same one). */
function tokenizerFacts(t: Tokenizer, opts: RunOptions): NonNullable<PlanProbes['tokenizer']> {
  if (isServerTokenizer(t)) return { kind: 'server', name: t.name, calibration: { specialTokens: t.specialTokens ?? 0, requests: t.requests } };
  const asked = opts.workload.tokenizer;
  if (asked !== undefined && asked !== 'approx' && asked !== 'server') return { kind: 'file', name: t.name, path: asked };
  return { kind: 'approx', name: t.name };
}
