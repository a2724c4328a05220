import type { WorkerStats } from '../results/run-summary.js';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { StageSummary } from '../results/stage.js';
import type { ClientHealth } from '../results/run-summary.js';

export type { ClientHealth } from '../results/run-summary.js';

export class HealthMonitor {
  private readonly loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 5 });
  private readonly cpu0 = process.cpuUsage();
  private readonly t0 = performance.now();
  private readonly sched0 = mainThreadSchedStat();

  constructor() {
    this.loop.enable();
  }

  /** `workers`: the load workers' own figures (`run --workers N`), kept in the result and weighed in the verdict. */
  finish(stages: readonly StageSummary[], workers?: WorkerStats[]): ClientHealth {
    this.loop.disable();
    const cpu = process.cpuUsage(this.cpu0);
    const wallMs = performance.now() - this.t0;
    const share = wallMs > 0 ? (cpu.user + cpu.system) / 1000 / wallMs : 0;
    // Waiting for a concurrency slot is queueing the user asked for, and a burst sends everything "at
    // once" only as fast as requests can be written: neither is the client falling behind a schedule.
    const paced = stages.filter((s) => s.kind !== 'burst');
    const lagSamples = paced.reduce((n, s) => n + (s.metrics.timerLagMs?.count ?? 0), 0);
    const lag = Math.max(0, ...paced.map((s) => s.metrics.timerLagMs?.p99 ?? 0));
    const connectWait = Math.max(0, ...paced.map((s) => s.metrics.connectWaitMs?.p99 ?? 0));
    // The histogram is in ns and includes the sampling resolution itself.
    const loopP99 = this.loop.count > 0 ? Math.max(0, this.loop.percentile(99) / 1e6 - 5) : 0;
    const sched1 = mainThreadSchedStat();
    const main =
      this.sched0 && sched1 && wallMs > 0
        ? { cpu: (sched1.cpuNs - this.sched0.cpuNs) / 1e6 / wallMs, wait: (sched1.waitNs - this.sched0.waitNs) / 1e6 / wallMs }
        : undefined;
    // What the run gives to judge by: its successes, and how long its rows ran.
    const okRequests = stages.reduce((n, s) => n + (s.requests?.ok ?? 0), 0);
    const rowsS = stages.reduce((t, s) => t + (Number.isFinite(s.durationS) ? s.durationS : 0), 0);
    const verdict = judgeClientHealth({
      okRequests,
      rowsS,
      ...(lagSamples > 0 ? { dispatchLagP99Ms: lag } : {}),
      eventLoopDelayP99Ms: loopP99,
      processCpuShare: share,
      ...(main ? { mainThreadCpuShare: main.cpu, cpuWaitShare: main.wait } : {}),
      ...(workers?.length ? { workerBusyShare: Math.max(...workers.map((w) => w.eventLoopUtilization)) } : {}),
    });
    return {
      dispatchLagP99Ms: lag,
      connectWaitP99Ms: connectWait,
      eventLoopDelayP99Ms: loopP99,
      clientCpuShare: share,
      clientLimited: verdict.clientLimited,
      ...(verdict.warning ? { warning: verdict.warning } : {}),
      dispatchLagSamples: lagSamples,
      ...(main ? { mainThreadCpuShare: main.cpu, cpuWaitShare: main.wait } : {}),
      ...(workers ? { workers } : {}),
    };
  }
}

/** What the health figures say, for judgeClientHealth. */
export interface HealthEvidence {
  /** Absent when no request's dispatch lag was measured. */
  dispatchLagP99Ms?: number;
  eventLoopDelayP99Ms: number;
  /** The whole process (every thread: an in-process simulator and load workers too), per core. */
  processCpuShare: number;
  /** The main thread's own CPU share (Linux); the client's event loop. */
  mainThreadCpuShare?: number;
  /** Share of the wall time the main thread waited, runnable, for a CPU (Linux). */
  cpuWaitShare?: number;
  /** `--workers`: the busiest load worker's event-loop utilization (0–1). */
  workerBusyShare?: number;
  /** Successful requests of the run (when known): with none, there are no figures to understate. */
  okRequests?: number;
  /** Seconds its rows ran (when known): below MIN_JUDGED_S, start-up work (compiling, first connections) is most of what the figures saw. */
  rowsS?: number;
}

/** Dispatch lag (ms, p99) above which timers count as late. */
export const LATE_DISPATCH_MS = 10;
/** Event-loop delay (ms, p99) above which the loop counts as late. */
export const LATE_LOOP_MS = 20;
/** The client's own thread busy this share of a core: late timers are then its own doing. */
export const BUSY_CLIENT_SHARE = 0.5;
/** The main thread waited for a CPU this share of the time or more: other work held the cores. */
const CPU_WAIT_SHARE = 0.01;
/** Rows shorter than this in all give no verdict: a few instant replies leave the client's start-up as the figures. */
export const MIN_JUDGED_S = 1;

/**
 * Whether late timers are the client's own limit. Timers that fire late while the client's thread is mostly idle
 * were held up by something else — other processes on the machine, the built-in simulator's thread sharing the
 * cores, a pause — and not by the client's work: the warning then names that, and does not blame the client.
 * The client is blamed only with evidence that it was busy: its own thread (or a load worker) used at least half a
 * core, or the process as a whole used nearly a core where the thread's own share is not known.
 * A run with no successful request, or whose rows lasted under MIN_JUDGED_S, gets no verdict at all: its figures
 * are kept, but they describe the client starting (5 instant 501 replies read as "the client may be the bottleneck").
 */
export function judgeClientHealth(e: HealthEvidence): { clientLimited: boolean; warning?: string } {
  if (e.okRequests === 0 || (e.rowsS !== undefined && e.rowsS < MIN_JUDGED_S)) return { clientLimited: false };
  const late: string[] = [];
  if (e.dispatchLagP99Ms !== undefined && e.dispatchLagP99Ms > LATE_DISPATCH_MS) late.push(`dispatch lag p99 ${e.dispatchLagP99Ms.toFixed(1)} ms`);
  if (e.eventLoopDelayP99Ms > LATE_LOOP_MS) late.push(`event-loop delay p99 ${e.eventLoopDelayP99Ms.toFixed(1)} ms`);
  const own = e.mainThreadCpuShare ?? e.processCpuShare;
  const busy = Math.max(own, e.workerBusyShare ?? 0);
  const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;
  const busyText =
    e.workerBusyShare !== undefined && e.workerBusyShare >= own
      ? `its busiest load worker ${pct(e.workerBusyShare)} busy`
      : e.mainThreadCpuShare !== undefined
        ? `its thread used ${pct(e.mainThreadCpuShare)} of a core`
        : `client CPU ${pct(e.processCpuShare)} of a core`;
  // A client that uses (nearly) a whole core is the bottleneck whether or not its timers were late yet.
  const saturated = (e.mainThreadCpuShare ?? e.processCpuShare) > 0.9 || (e.workerBusyShare ?? 0) > 0.9;
  if (saturated || (late.length > 0 && busy >= BUSY_CLIENT_SHARE)) {
    return { clientLimited: true, warning: `the client may be the bottleneck (${[...late, busyText].join(', ')}): figures may understate the server` };
  }
  if (late.length === 0) return { clientLimited: false };
  const waited = e.cpuWaitShare !== undefined && e.cpuWaitShare >= CPU_WAIT_SHARE;
  const cause = waited
    ? `its thread waited for a CPU ${pct(e.cpuWaitShare as number)} of the time: other work on this machine held the cores`
    : 'other processes on this machine, or pauses, held it up';
  return {
    clientLimited: false,
    warning: `timers fired late (${late.join(', ')}) while the client was mostly idle (${busyText}), so not from the client's own load: ${cause}; latencies may include up to that delay — a quieter machine gives cleaner figures`,
  };
}

/** The main thread's time on a CPU and waiting for one (ns), from /proc (Linux); undefined elsewhere. */
function mainThreadSchedStat(): { cpuNs: number; waitNs: number } | undefined {
  try {
    // The thread-group leader's line is the main thread's own (not the sum over worker threads).
    const [cpu, wait] = readFileSync(`/proc/${process.pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return Number.isFinite(cpu) && Number.isFinite(wait) ? { cpuNs: cpu as number, waitNs: wait as number } : undefined;
  } catch {
    return undefined;
  }
}

export function healthLine(h: ClientHealth): string {
  // Summaries written before connectWaitP99Ms existed lack it.
  const connect = (h.connectWaitP99Ms ?? 0) >= 1 ? `, connection setup p99 ${h.connectWaitP99Ms.toFixed(2)} ms (not client lag)` : '';
  // A figure from no sample is no figure: `—` (files written before dispatchLagSamples existed keep their number).
  const lag = h.dispatchLagSamples === 0 ? '—' : `${h.dispatchLagP99Ms.toFixed(2)} ms`;
  const thread = h.mainThreadCpuShare !== undefined ? ` (its own thread ${(h.mainThreadCpuShare * 100).toFixed(0)}%)` : '';
  const base = `client health: dispatch lag p99 ${lag}, event-loop delay p99 ${h.eventLoopDelayP99Ms.toFixed(2)} ms, client CPU ${(h.clientCpuShare * 100).toFixed(0)}%${thread}${connect}`;
  const workers = h.workers?.length
    ? `\nload workers: ${h.workers.map((w) => `#${w.index} ${w.requests} requests, event loop busy ${(w.eventLoopUtilization * 100).toFixed(0)}%, delay p99 ${w.eventLoopDelayP99Ms.toFixed(2)} ms`).join('; ')}`
    : '';
  return h.warning ? `${base}${workers}\nWARNING: ${h.warning}` : `${base}${workers}`;
}
