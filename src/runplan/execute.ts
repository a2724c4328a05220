/**
 * The execution half of a run: a resolved plan, a runner and observers. The runner decides where requests go and
 * on which clock (runners.ts: in-process HTTP, a worker pool, a shard of either, or the simulator in virtual
 * time); the executor walks the plan's profile on it and tells the observers what happens.
 */
import { runBenchmark, type BenchmarkHooks, type BenchmarkResult } from '../load/benchmark.js';
import type { StageRunner } from '../load/types.js';
import type { StageSummary } from '../metrics/summary.js';
import type { Workload } from '../workload/types.js';
import { fanOut, type RunObserver } from './observer.js';
import { buildProfileConfig } from './profile-config.js';
import { planRunOptions } from './resolve.js';
import type { RunPlan } from './schema.js';

/** The prompts of a plan, built once before the run (a grid's cells too, so a bad setting fails before any request). */
export interface PlanWorkload {
  workload: Workload;
  workloadFor: (promptTokens: number, outputTokens: number) => Workload;
}

/** What a runner hands the executor: the stage runner, and the hooks of its clock (idle waits, barriers, stops). */
export interface PlanRunner {
  readonly clock: 'real' | 'virtual';
  /** `events` gets every request the stage runner sends and ends (the observers' hot-path hooks). */
  stageRunner(events: Required<Pick<RunObserver, 'onDispatch' | 'onRecord'>>): StageRunner;
  hooks?: Pick<BenchmarkHooks, 'beforeStage' | 'alignStage' | 'stopReason'>;
}

export interface ExecuteOptions {
  prompts: PlanWorkload;
  signal?: AbortSignal;
  /** `--resume`: the rows already finished, where the request numbering continues and this part's id space. */
  resume?: { stages: StageSummary[]; nextRequestId: number; idBase?: number; requestsSent?: number };
}

export async function executeRunPlan(plan: RunPlan, runner: PlanRunner, observers: readonly (RunObserver | undefined)[], o: ExecuteOptions): Promise<BenchmarkResult> {
  const events = fanOut(observers);
  const opts = planRunOptions(plan);
  const built = buildProfileConfig(opts, o.prompts.workloadFor, o.prompts.workload);
  // Virtual time has no host noise: a capacity probe's keep-up failure is not run again (load/capacity.ts ambiguous).
  const cfg = runner.clock === 'virtual' && built.capacity ? { ...built, capacity: { ...built.capacity, virtualTime: true } } : built;
  const real = runner.clock === 'real';
  const result = await runBenchmark(cfg, runner.stageRunner(events), {
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.resume
      ? {
          completed: o.resume.stages,
          firstRequestId: o.resume.nextRequestId,
          ...(o.resume.idBase !== undefined ? { idBase: o.resume.idBase } : {}),
          ...(o.resume.requestsSent !== undefined ? { firstItem: o.resume.requestsSent } : {}),
        }
      : {}),
    ...(plan.slo ? { slo: plan.slo } : {}),
    ...(plan.load.repeat ? { repeat: plan.load.repeat } : {}),
    ...(plan.window.steadyState ? { steadyState: true } : {}),
    // Only a real server can go silent: virtual time always finishes its requests.
    ...(real ? { stallMs: plan.window.stallSeconds * 1000 } : {}),
    ...runner.hooks,
    ...(events.has('onStageEdge') ? { markStage: async (i: number, edge: 'start' | 'end') => { await events.onStageEdge(i, edge); } } : {}),
    onStageStart: (spec, i) => events.onStageStart(spec, i),
    onStageEnd: (s, r) => events.onStageEnd(s, r),
  });
  await events.onRunEnd(result);
  return result;
}
