import type { WorkerStats } from '../distributed/protocol.js';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { StageSummary } from './summary.js';

/** The client's own health over a run: is the number measured the server's, or the client's limit? */
export interface ClientHealth {
  /** Send time minus target time, less any wait for a concurrency slot or a connection: the client's own lateness. */
  dispatchLagP99Ms: number;
  /**
   * Time spent opening connections before sending (p99 over non-burst rows): the network's and the server's
   * time, e.g. a new connection per request to a server that closes each one after its reply. Not client lag.
   */
  connectWaitP99Ms: number;
  eventLoopDelayP99Ms: number;
  /** Client CPU time / wall time (1 = one core fully busy). */
  clientCpuShare: number;
  clientLimited: boolean;
  warning?: string;
  /** `run --workers N`: each load worker thread's own event loop (this figure set is the coordinator's). */
  workers?: WorkerStats[];
}

export class HealthMonitor {
  private readonly loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 5 });
  private readonly cpu0 = process.cpuUsage();
  private readonly t0 = performance.now();

  constructor() {
    this.loop.enable();
  }

  finish(stages: readonly StageSummary[]): ClientHealth {
    this.loop.disable();
    const cpu = process.cpuUsage(this.cpu0);
    const wallMs = performance.now() - this.t0;
    const share = wallMs > 0 ? (cpu.user + cpu.system) / 1000 / wallMs : 0;
    // Waiting for a concurrency slot is queueing the user asked for, and a burst sends everything "at
    // once" only as fast as requests can be written: neither is the client falling behind a schedule.
    const paced = stages.filter((s) => s.kind !== 'burst');
    const lag = Math.max(0, ...paced.map((s) => s.metrics.timerLagMs?.p99 ?? 0));
    const connectWait = Math.max(0, ...paced.map((s) => s.metrics.connectWaitMs?.p99 ?? 0));
    // The histogram is in ns and includes the sampling resolution itself.
    const loopP99 = this.loop.count > 0 ? Math.max(0, this.loop.percentile(99) / 1e6 - 5) : 0;
    const reasons: string[] = [];
    if (lag > 10) reasons.push(`dispatch lag p99 ${lag.toFixed(1)} ms`);
    if (loopP99 > 20) reasons.push(`event-loop delay p99 ${loopP99.toFixed(1)} ms`);
    if (share > 0.9) reasons.push(`client CPU ${(share * 100).toFixed(0)}% of a core`);
    const health: ClientHealth = {
      dispatchLagP99Ms: lag,
      connectWaitP99Ms: connectWait,
      eventLoopDelayP99Ms: loopP99,
      clientCpuShare: share,
      clientLimited: reasons.length > 0,
    };
    if (reasons.length > 0) {
      health.warning = `the client may be the bottleneck (${reasons.join(', ')}): figures may understate the server`;
    }
    return health;
  }
}

export function healthLine(h: ClientHealth): string {
  // Summaries written before connectWaitP99Ms existed lack it.
  const connect = (h.connectWaitP99Ms ?? 0) >= 1 ? `, connection setup p99 ${h.connectWaitP99Ms.toFixed(2)} ms (not client lag)` : '';
  const base = `client health: dispatch lag p99 ${h.dispatchLagP99Ms.toFixed(2)} ms, event-loop delay p99 ${h.eventLoopDelayP99Ms.toFixed(2)} ms, client CPU ${(h.clientCpuShare * 100).toFixed(0)}%${connect}`;
  const workers = h.workers?.length
    ? `\nload workers: ${h.workers.map((w) => `#${w.index} ${w.requests} requests, event loop busy ${(w.eventLoopUtilization * 100).toFixed(0)}%, delay p99 ${w.eventLoopDelayP99Ms.toFixed(2)} ms`).join('; ')}`
    : '';
  return h.warning ? `${base}${workers}\nWARNING: ${h.warning}` : `${base}${workers}`;
}
