import { shortError } from '../core/short-error.js';
import type { StageSummary } from '../metrics/summary.js';
import type { StageSpec } from '../load/types.js';
import { stageNumberText } from '../load/profiles.js';

import type { ProgressCounters } from '../ui/progress-counters.js';

// The counters' type lives in ui/ (the live feed reads them), below cli/ (src/layers.ts).
export type { ProgressCounters };

/**
 * One live line per stage on a TTY (redrawn at most every 200 ms); plain periodic lines otherwise.
 * Writes to the given stream (stderr when stdout carries --json).
 */
export class Progress {
  readonly counters: ProgressCounters = { dispatched: 0, done: 0, errors: 0 };
  private timer: NodeJS.Timeout | undefined;
  private stageStart = 0;
  private label = '';
  private stageNo = '';
  private lastPlain = 0;
  private readonly tty: boolean;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly enabled: boolean,
    private readonly plannedStages: number,
  ) {
    this.tty = out.isTTY === true && process.env['CI'] !== 'true';
  }

  stageStarted(spec: StageSpec, index: number): void {
    this.counters.dispatched = 0;
    this.counters.done = 0;
    this.counters.errors = 0;
    this.stageStart = performance.now();
    this.label = spec.label;
    this.stageNo = stageNumberText(index, this.plannedStages);
    if (!this.enabled) return;
    this.timer = setInterval(() => this.tick(), this.tty ? 200 : 1000);
    this.timer.unref();
    this.tick();
  }

  stageEnded(s: StageSummary): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (!this.enabled) return;
    if (this.tty) this.out.write('\r\x1b[2K');
    const m = s.metrics;
    const failed = s.requests.errors > 0 ? `, ${s.requests.errors} failed` : '';
    const cut = s.requests.incomplete > 0 ? `, ${s.requests.incomplete} cut` : '';
    const fig =
      s.requests.ok > 0 && s.inputThroughput !== undefined
        ? `${s.requestThroughput.toFixed(2)} req/s, ${s.inputThroughput.toFixed(1)} inputs/s, latency ${fmt(m.e2eMs?.mean)} ms, ${s.promptTokenThroughput.toFixed(0)} input tok/s`
        : s.requests.ok > 0
        ? `${s.requestThroughput.toFixed(2)} req/s, TTFT ${fmt(m.ttftMs?.mean)} ms, ITL ${fmt(m.itlMs?.mean)} ms, ${s.outputTokenThroughput.toFixed(1)} tok/s`
        : `no successful request${s.firstError ? ` (${shortError(s.firstError)})` : ''}`;
    this.out.write(`[${this.stageNo}] ${s.label}: ${s.requests.ok}/${s.requests.total} ok${failed}${cut} in ${s.durationS.toFixed(1)} s — ${fig}\n`);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.enabled && this.tty) this.out.write('\r\x1b[2K');
  }

  private tick(): void {
    const elapsed = (performance.now() - this.stageStart) / 1000;
    const c = this.counters;
    const rate = elapsed > 0 ? c.done / elapsed : 0;
    const line = `[${this.stageNo}] ${this.label}  ${elapsed.toFixed(1)} s  done ${c.done}  in flight ${c.dispatched - c.done}  ${rate.toFixed(2)} req/s  errors ${c.errors}`;
    if (this.tty) this.out.write(`\r\x1b[2K${line}`);
    else if (performance.now() - this.lastPlain >= 10_000) {
      this.lastPlain = performance.now();
      this.out.write(`${line}\n`);
    }
  }
}

function fmt(v: number | undefined): string {
  return v === undefined ? '—' : v.toFixed(1);
}
