import { performance } from 'node:perf_hooks';
import { SAMPLED_SERIES, parsePrometheus, sampleFromMetrics, type ServerSample } from './prometheus.js';
import { createTextGetter, type TextGetter } from './text-get.js';

/** A reading that takes longer than this is skipped. */
const READ_TIMEOUT_MS = 2000;
/** Twice a second. */
export const TELEMETRY_INTERVAL_MS = 500;

/**
 * Samples the server's Prometheus /metrics twice a second during a run (control plane, off the hot path; one
 * kept-alive connection for plain http:, text-get.ts). A server without /metrics is noticed on the first try
 * and left alone.
 */
export class TelemetrySampler {
  private readonly samples: Array<ServerSample & { stage: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  private stage = 0;
  private available: boolean | undefined;
  private busy = false;
  private readonly metrics: TextGetter;

  constructor(
    baseUrl: string,
    apiKey?: string,
    private readonly intervalMs = TELEMETRY_INTERVAL_MS,
  ) {
    this.metrics = createTextGetter(`${baseUrl}/metrics`, apiKey ? { authorization: `Bearer ${apiKey}` } : {});
  }

  /**
   * Resolves once the first sample tells whether the server has /metrics. `timer: false`: no timer of its own — the
   * caller calls tick() (several replicas read on one timer, so that their readings are of one moment).
   */
  async start(opts: { timer?: boolean } = {}): Promise<boolean> {
    await this.sample();
    if (this.available && opts.timer !== false) {
      this.timer = setInterval(() => void this.sample(), this.intervalMs);
      this.timer.unref();
    }
    return this.available === true;
  }

  /** One periodic reading now (nothing for a server without /metrics, or while the previous reading is under way). */
  tick(): Promise<void> {
    return this.sample();
  }

  /** Later samples belong to this row. (No sample here: before the row's first request it would read 0.) */
  setStage(stage: number): void {
    this.stage = stage;
  }

  /**
   * A reading at a row's start (before its first request) or end (after its last reply): counters only — the
   * gauges there read an idle server — so counter increases (prefix cache, speculative decoding) cover the whole
   * row and not just the stretch between two periodic samples.
   */
  async markEdge(stage: number): Promise<void> {
    const s = await this.readNow();
    if (s) this.samples.push({ ...s, stage, edge: true });
  }

  /** One row's readings, periodic and edge (metrics/server-gauges.ts summarizes them, over the row and its window). */
  samplesOf(stage: number): ServerSample[] {
    return this.samples.filter((s) => s.stage === stage);
  }

  series(): ReadonlyArray<ServerSample & { stage: number }> {
    return this.samples;
  }

  /** Whether the server's /metrics has running/waiting gauges (known after start()). */
  get hasGauges(): boolean {
    return this.available === true;
  }

  /** One fresh reading, not kept in the series (used between rows, which belong to no row). */
  async readNow(): Promise<ServerSample | undefined> {
    if (!this.available) return undefined;
    try {
      const text = await this.metrics.get(READ_TIMEOUT_MS);
      return text === undefined ? undefined : sampleFromMetrics(parsePrometheus(text, SAMPLED_SERIES), performance.now());
    } catch {
      return undefined;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.metrics.close();
  }

  private async sample(): Promise<void> {
    if (this.busy || this.available === false) return;
    this.busy = true;
    try {
      const text = (await this.metrics.get(READ_TIMEOUT_MS)) ?? '';
      const s = sampleFromMetrics(parsePrometheus(text, SAMPLED_SERIES), performance.now());
      const known = s.running !== undefined || s.waiting !== undefined || s.kvUsage !== undefined;
      this.available ??= known;
      if (known) this.samples.push({ ...s, stage: this.stage });
    } catch {
      this.available ??= false;
    } finally {
      this.busy = false;
    }
  }
}
