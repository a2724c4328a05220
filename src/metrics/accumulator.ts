import { ReplicaTally } from './replica-figures.js';
import { DDSketch } from '@datadog/sketches-js';
import { meetsRequestSlo } from './derive.js';
import { errorText, type RequestRecord } from './record.js';
import { computeStats, type Stats } from './stats.js';
import type { MetricName } from '../results/metric-names.js';

/** A growable column of doubles: 8 bytes per value instead of a record object per request. */
export class Column {
  private data = new Float64Array(256);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/** Token-level values (chunk gaps) go to a sketch: 0.5% relative error, constant memory. */
class SketchStats {
  private readonly sketch = new DDSketch({ relativeAccuracy: 0.005 });
  private sumSq = 0;
  add(v: number): void {
    this.sketch.accept(v);
    this.sumSq += v * v;
  }
  stats(): Stats | undefined {
    const s = this.sketch;
    if (s.count === 0) return undefined;
    const mean = s.sum / s.count;
    const q = (p: number): number => s.getValueAtQuantile(p);
    return {
      count: s.count,
      mean,
      median: q(0.5),
      p90: q(0.9),
      p95: q(0.95),
      p99: q(0.99),
      min: s.min,
      max: s.max,
      stddev: Math.sqrt(Math.max(0, this.sumSq / s.count - mean * mean)),
    };
  }
}

/** The per-request fields summarized exactly (a part of the one list, results/metric-names.ts). */
const REQUEST_METRICS = [
  'ttftMs',
  'itlMs',
  'e2eMs',
  'queuedE2eMs',
  'latencyPerTokenMs',
  'latencyPerOutputTokenMs',
  'promptTokens',
  'outputTokens',
  'ttfoMs',
  'reasoningTokens',
  'answerItlMs',
  'imageTokens',
] as const satisfies readonly MetricName[];
type RequestMetric = (typeof REQUEST_METRICS)[number];

/**
 * Everything a stage summary needs, folded in as records finish: exact columns for per-request
 * metrics, a sketch for chunk gaps, counters for the rest. Records themselves are not kept.
 */
export class StageAccumulator {
  measured = 0;
  ok = 0;
  errors = 0;
  incomplete = 0;
  warmup = 0;
  /**
   * Unmeasured requests sent in the cool-down after the window (load/window.ts), and unmeasured requests cut: the
   * cool-down's, and any ramp-up request still running, cancelled once the window's measured requests had finished.
   */
  cooldown = 0;
  cooldownCut = 0;
  /** Measured requests sent again on a fresh connection (the server had closed the reused one unread). */
  retried = 0;
  firstSentMs = Infinity;
  lastEndMs = -Infinity;
  outputTokens = 0;
  promptTokens = 0;
  /** Embeddings: measured requests that carried a count of inputs, those inputs, and the inputs of the successes. */
  inputRequests = 0;
  inputs = 0;
  okInputs = 0;
  outputLengthMismatches = 0;
  promptLengthMismatches = 0;
  readonly errorsByCode: Record<string, number> = {};
  readonly tokenCountSources: Record<string, number> = {};
  firstError?: string;
  firstIncomplete?: string;
  private readonly columns = new Map<string, Column>();
  private readonly gaps = new SketchStats();
  /** Records that met every SLO; counted only when an SLO is set. */
  good = 0;
  /** Conversations (--turns, session traces): each one's first send, last end and measured turns. */
  readonly sessions = new Map<number, { sentMs: number; endMs: number; turns: number }>();
  /** Cached and prompt tokens of first turns [0] and later turns [1], where usage reported cached tokens. */
  readonly cacheByTurn: [{ cached: number; prompt: number }, { cached: number; prompt: number }] = [
    { cached: 0, prompt: 0 },
    { cached: 0, prompt: 0 },
  ];
  /** Successful requests whose usage said how many prompt tokens came from the prefix cache, and those sums. */
  cacheReported = 0;
  cachedPromptTokens = 0;
  promptTokensWithCacheInfo = 0;
  /** Successes whose server reported its speculative-decoding verify passes (SGLang), their passes and output tokens. */
  specReported = 0;
  specVerifySteps = 0;
  specOutputTokens = 0;
  /** Several replicas (--target URL,URL or --replica-header): each one's measured requests. */
  readonly replicas = new ReplicaTally();

  constructor(private readonly slo?: { ttftMs?: number; itlMs?: number; e2eMs?: number }) {}

  /**
   * Every request's timeline, ramp-up included (a ramp request that finishes inside the window is a completion
   * of the window): status (0 ok, 1 failed, 2 cut), sent, end, first and last token, output tokens.
   */
  readonly timeline = {
    status: new Column(),
    sent: new Column(),
    end: new Column(),
    firstToken: new Column(),
    lastToken: new Column(),
    outputTokens: new Column(),
    promptTokens: new Column(),
  };

  add(r: RequestRecord): void {
    const t = this.timeline;
    t.status.push(r.status === 'ok' ? 0 : r.status === 'error' ? 1 : 2);
    t.sent.push(r.sentAtMs);
    t.end.push(r.endAtMs);
    t.firstToken.push(r.firstTokenAtMs ?? NaN);
    t.lastToken.push(r.lastTokenAtMs ?? NaN);
    t.outputTokens.push(r.outputTokens);
    t.promptTokens.push(r.promptTokens);
    // Every request occupies its replica, warm-up and cool-down too: each replica's mean in flight counts them.
    if (r.replica !== undefined) this.replicas.occupy(r.replica, r.sentAtMs, r.endAtMs);
    if (r.warmup) {
      if (r.cooldown === true) this.cooldown++;
      else this.warmup++;
      if (r.status === 'incomplete') this.cooldownCut++;
      return;
    }
    this.measured++;
    if (r.replica !== undefined) this.replicas.add(r as RequestRecord & { replica: number });
    if (r.retries) this.retried++;
    if (r.conversationId !== undefined) {
      const s = this.sessions.get(r.conversationId);
      if (s) {
        s.sentMs = Math.min(s.sentMs, r.sentAtMs);
        s.endMs = Math.max(s.endMs, r.endAtMs);
        s.turns++;
      } else this.sessions.set(r.conversationId, { sentMs: r.sentAtMs, endMs: r.endAtMs, turns: 1 });
    }
    if (r.inputCount !== undefined) {
      this.inputRequests++;
      this.inputs += r.inputCount;
      if (r.status === 'ok') this.okInputs += r.inputCount;
    }
    if (r.sentAtMs < this.firstSentMs) this.firstSentMs = r.sentAtMs;
    if (r.endAtMs > this.lastEndMs) this.lastEndMs = r.endAtMs;
    this.col('dispatchLagMs').push(r.dispatchLagMs);
    // Opening a connection is the network's and the server's time, not the client falling behind its schedule.
    this.col('timerLagMs').push(r.dispatchLagMs - (r.clientQueueMs ?? 0) - (r.connectWaitMs ?? 0));
    this.col('connectWaitMs').push(r.connectWaitMs ?? 0);
    this.col('clientQueueMs').push(r.clientQueueMs ?? 0);
    if (r.status === 'incomplete') {
      this.incomplete++;
      this.firstIncomplete ??= errorText(r) ?? 'incomplete';
      return;
    }
    if (r.status === 'error') {
      this.errors++;
      // HTTP failures are told apart by status: a 429 (back off) and a 500 (broken) mean different things.
      const status = r.error?.httpStatus;
      const code = `${r.error?.code ?? 'E_INTERNAL'}${status !== undefined ? `:${status}` : ''}`;
      this.errorsByCode[code] = (this.errorsByCode[code] ?? 0) + 1;
      this.firstError ??= errorText(r) ?? 'failed';
      return;
    }
    this.ok++;
    this.outputTokens += r.outputTokens;
    this.promptTokens += r.promptTokens;
    this.tokenCountSources[r.tokenCountSource] = (this.tokenCountSources[r.tokenCountSource] ?? 0) + 1;
    if (r.outputTokens !== r.requestedOutputTokens) this.outputLengthMismatches++;
    // Later turns carry history the client did not count; only whole prompts compare with the server.
    // Image tokens are counted by the server only: prompts with images are expected to differ.
    if ((r.turn ?? 0) === 0 && r.promptTokenSource.startsWith('server') && r.images === undefined) {
      this.col('promptTokenMismatch').push(r.promptTokens - r.clientPromptTokens);
      if (r.promptTokens !== r.clientPromptTokens) this.promptLengthMismatches++;
    }
    if (r.turn !== undefined && r.ttftMs !== undefined) this.col(r.turn === 0 ? 'ttftFirstTurnMs' : 'ttftLaterTurnMs').push(r.ttftMs);
    if (r.cachedTokens !== undefined) {
      this.col('cachedTokens').push(r.cachedTokens);
      this.cacheReported++;
      this.cachedPromptTokens += r.cachedTokens;
      this.promptTokensWithCacheInfo += r.promptTokens;
      if (r.turn !== undefined) {
        const c = this.cacheByTurn[r.turn === 0 ? 0 : 1];
        c.cached += r.cachedTokens;
        c.prompt += r.promptTokens;
      }
    }
    if (r.specVerifySteps !== undefined && r.specVerifySteps > 0) {
      this.specReported++;
      this.specVerifySteps += r.specVerifySteps;
      this.specOutputTokens += r.outputTokens;
    }
    for (const name of REQUEST_METRICS) {
      const v = r[name as RequestMetric];
      if (v !== undefined && Number.isFinite(v)) this.col(name).push(v);
    }
    for (const g of r.chunkGapsMs) this.gaps.add(g);
    // Several tokens in one chunk: speculative decoding's accepted drafts, or a server that batches its stream.
    if (r.chunks > 0 && r.firstTokenAtMs !== undefined) this.col('tokensPerChunk').push(r.outputTokens / r.chunks);
    if (this.slo && meetsRequestSlo(r, this.slo)) this.good++;
  }

  /** Exact statistics of a per-request metric (sorted copy), or the chunk-gap sketch. */
  stats(name: string): Stats | undefined {
    if (name === 'chunkGapMs') return this.gaps.stats();
    const c = this.columns.get(name);
    return c ? computeStats(c.view()) : undefined;
  }

  private col(name: string): Column {
    let c = this.columns.get(name);
    if (!c) {
      c = new Column();
      this.columns.set(name, c);
    }
    return c;
  }
}
