/**
 * The runners a plan runs on. `httpPlanRunner`: real time against an HTTP server, sent from this thread (an
 * HttpTarget) or from a pool of load workers (WorkerPool); a plan with a shard sends only its part, and with a
 * barrier its rows start together with the other shards'. `virtualPlanRunner`: the simulated engine in virtual
 * time (predict).
 */
import { resolve } from 'node:path';
import { meetAtRow } from '../distributed/barrier.js';
import { runKeyOf } from '../distributed/shard-run.js';
import type { Dialect } from '../dialects/types.js';
import { createHttpStageRunner, type ExchangeSender } from '../load/http-runner.js';
import type { ServerSample } from '../transport/prometheus.js';
import type { StageSummary } from '../metrics/summary.js';
import type { VirtualStageRunner } from '../sim/virtual-runner.js';
import type { HttpTarget } from '../transport/http.js';
import { waitForIdleServer } from '../transport/idle-wait.js';
import type { Tokenizer } from '../workload/tokenizer.js';
import type { Workload } from '../workload/types.js';
import type { PlanRunner } from './execute.js';
import { dialectOf } from './probe.js';
import { DEFAULT_SESSION_HEADER } from '../config/flags/target.js';
import { planRunOptions } from './resolve.js';
import type { RunPlan } from './schema.js';
import { hopelessReason } from './stop-reason.js';

export interface HttpRunnerDeps {
  baseUrl: string;
  /** Where requests go: `probeTarget` itself, or a worker pool. */
  sender: ExchangeSender;
  /** This thread's connection to the server: the idle probes between rows go through it. */
  probeTarget: HttpTarget;
  tokenizer: Tokenizer;
  workload: Workload;
  signal: AbortSignal;
  /** The server's running/waiting gauges, where its /metrics has them (idle waits read them instead of probing). */
  readGauges?: () => Promise<ServerSample | undefined>;
  /** Whose gauges readGauges reads: the server's (default), or several --target replicas' added up. */
  gaugesOf?: 'server' | 'replicas';
  /** A line for the user (the barrier's long waits). */
  say: (line: string) => void;
}

export function httpPlanRunner(plan: RunPlan, deps: HttpRunnerDeps): PlanRunner {
  const server = plan.target.resolved;
  if (!server) throw new Error('httpPlanRunner: the plan has no resolved server (probe it first)');
  const dialect = dialectOf(server);
  const { request, window, distribution } = plan;
  const shard = distribution.shard;
  const signal = deps.signal;
  // Requests cut in each row, ramp-up and cool-down included: the next row waits for a server that may serve them.
  const cutByRow = new Map<number, number>();
  return {
    clock: 'real',
    stageRunner: (events) =>
      createHttpStageRunner({
        target: deps.sender,
        ...(shard ? { shard } : {}),
        ...(request.reasoningFormat ? { reasoningFormat: request.reasoningFormat } : {}),
        dialect,
        model: server.model,
        forceLength: request.forceLength && dialect.canForceLength,
        stream: request.stream,
        tokenizer: deps.tokenizer,
        seed: plan.workload.seed,
        signal,
        drainMs: window.drainSeconds * 1000,
        ...(plan.slo ? { slo: plan.slo } : {}),
        ...(request.extraBody ? { extraBody: request.extraBody } : {}),
        sessionHeader: request.sessionHeader ?? DEFAULT_SESSION_HEADER,
        onDispatch: events.onDispatch,
        onRecord: (r) => {
          if (r.status === 'incomplete') cutByRow.set(r.stage, (cutByRow.get(r.stage) ?? 0) + 1);
          events.onRecord(r);
        },
      }),
    hooks: {
      beforeStage: (_spec, _i, prior) => idleWait(prior),
      ...(shard && distribution.barrier ? { alignStage: barrierAt(plan, deps) } : {}),
      stopReason: (s) => hopelessReason(s, dialect.name, deps.baseUrl),
    },
  };

  function idleWait(prior: readonly StageSummary[]): ReturnType<typeof waitForIdleServer> {
    const prev = prior[prior.length - 1];
    // The probe's idle level: the synchronous row's TTFT (embeddings: its latency, which the probe then times).
    const idle = prior.filter((x) => x.label === 'synchronous').map((x) => (dialect.embeddings ? x.metrics.e2eMs : x.metrics.ttftMs)).find((m) => m !== undefined);
    const cut = prev ? (cutByRow.get(prev.index) ?? 0) : 0;
    return waitForIdleServer({
      ...(deps.readGauges ? { readGauges: deps.readGauges, ...(deps.gaugesOf ? { gaugesOf: deps.gaugesOf } : {}) } : {}),
      probe: () => probeTtft(deps.probeTarget, dialect, server?.model ?? '', deps.workload),
      ...(idle ? { idleTtftMs: idle.median, ...(dialect.embeddings ? { probeLabel: 'latency' } : {}) } : {}),
      // Cut requests (an over-saturated stop, the cool-down's cancellations) count: a server may keep running abandoned requests.
      leftRequests: prev !== undefined && (cut > 0 || prev.requests.incomplete > 0 || (prev.requests.cooldownCut ?? 0) > 0 || prev.stoppedEarly !== undefined),
      ...(prev ? { cutRequests: Math.max(cut, prev.requests.incomplete + (prev.requests.cooldownCut ?? 0)), previousLabel: prev.label } : {}),
      boundMs: window.idleWaitSeconds * 1000,
      signal,
    });
  }
}

/** Shards meet in the plan's barrier folder before every row, so every row starts together. */
function barrierAt(plan: RunPlan, deps: HttpRunnerDeps): (i: number) => Promise<void> {
  const shard = plan.distribution.shard as NonNullable<RunPlan['distribution']['shard']>;
  const runKey = runKeyOf(planRunOptions(plan));
  const meeting = `${runKey}-${plan.distribution.startAt ?? 'now'}`;
  return async (i) => {
    const met = await meetAtRow(i, { dir: resolve(plan.distribution.barrier as string), shard, meeting }, deps.signal);
    if (met.waitedMs > 2000) deps.say(`barrier: every shard reached row ${i + 1} after ${(met.waitedMs / 1000).toFixed(1)} s`);
  };
}

/** predict: the simulated engine in virtual time; records stay in each row's result. */
export function virtualPlanRunner(runner: VirtualStageRunner): PlanRunner {
  return { clock: 'virtual', stageRunner: () => runner };
}

/**
 * A one-token request with a fresh prompt: its time to first token tells whether the server is back to idle.
 * Items far past any row's ids keep it unique at its start.
 */
let probes = 0;
async function probeTtft(target: HttpTarget, dialect: Dialect, model: string, workload: Workload): Promise<number | undefined> {
  const item = workload.item(1_000_000_000 + probes++);
  // Embeddings have no first token: the probe's whole latency, against the synchronous row's (see beforeStage).
  const embeddings = dialect.embeddings === true;
  const request = {
    model, prompt: item.prompt, ...(item.messages ? { messages: item.messages } : {}), ...(item.inputs ? { inputs: item.inputs } : {}),
    maxTokens: 1, forceLength: false, stream: !embeddings,
  };
  const ex = await target.send(dialect.buildRequest(request), dialect, request);
  if (ex.error) return undefined;
  if (embeddings) return ex.endAtMs - ex.sentAtMs;
  if (ex.contentTimesMs.length === 0) return undefined;
  return (ex.contentTimesMs[0] as number) - ex.sentAtMs;
}
