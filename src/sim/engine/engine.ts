import { Rng } from '../../core/rng.js';
import type { StepCostModel } from '../cost/step-cost.js';
import type { SimDriver } from '../des/driver.js';
import type { SimEngine, SimEngineStats, SimRequestHandle, SimRequestListener, SimRequestSpec } from '../types.js';
import { BlockManager } from './block-manager.js';
import type { Admission } from '../wire/length-errors.js';
import type { EngineProfile } from './profiles.js';
import { type ScheduledBatch, Scheduler } from './scheduler.js';
import { Deque, type Seq } from './seq.js';
import { continuationProbability, drawAccepted, type SpecDecode } from './spec-decode.js';
import { EnergyLedger, stepWatts, type GpuPowerSpec } from './power.js';

export interface EngineConfig {
  profile: EngineProfile;
  cost: StepCostModel;
  modelName: string;
  maxModelLen: number;
  kvBlocks: number;
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  /** Per-request time before the scheduler sees a request (HTTP parse, tokenize). */
  ingestMs: number;
  /** Delay between a token's step end and its emission (detokenize, serialize, write). */
  egressMs: number;
  /** Multiplies every model/host time; 0 = infinitely fast engine. */
  timeScale: number;
  /** Lognormal σ of per-step jitter (0 = deterministic). */
  noiseSigma: number;
  /** Share full prompt blocks between requests by hash (vLLM automatic prefix caching, SGLang radix cache). */
  prefixCaching?: boolean;
  /** Speculative decoding (K drafts per decode step, acceptance rate); absent = one token per step. */
  specDecode?: SpecDecode;
  seed: number;
  /**
   * The HTTP front's length rules, for callers that submit without one (predict): a request it rejects
   * makes submit() throw SimRejectedError with the engine's status and message.
   */
  admit?: (promptTokens: number, maxTokens: number) => Admission;
  /** Board power of each GPU and how many the engine spans (power.ts); absent: no energy ledger. */
  power?: GpuPowerSpec & { gpus: number };
}

/** Thrown by submit() for a request the engine cannot take at all; `status` is the HTTP status its front answers. */
export class SimRejectedError extends Error {
  readonly status: number;
  constructor(message: string, status = 400) {
    super(message);
    this.name = 'SimRejectedError';
    this.status = status;
  }
}

/**
 * Step-level engine: scheduler copy + per-step cost model, driven by any SimDriver. Every decision
 * depends only on event times, so virtual and real-time runs make identical choices.
 */
export class Engine implements SimEngine {
  readonly maxModelLen: number;
  readonly modelName: string;
  private readonly cfg: EngineConfig;
  private readonly driver: SimDriver;
  private readonly waiting = new Deque<Seq>();
  private readonly running: Seq[] = [];
  private readonly blocks: BlockManager;
  private readonly scheduler: Scheduler;
  private readonly rng: Rng;
  private readonly specRng: Rng;
  private readonly specQ: number;
  private busy = false;
  private nextId = 1;
  /** Joules drawn on the engine's clock (power.ts), when the hardware has power figures. */
  readonly energy: EnergyLedger | undefined;
  private st = {
    preemptionsTotal: 0, promptTokensTotal: 0, generationTokensTotal: 0, requestsFinishedTotal: 0, stepsTotal: 0,
    busyMs: 0, specDraftTokensTotal: 0, specAcceptedTokensTotal: 0,
  };

  constructor(cfg: EngineConfig, driver: SimDriver) {
    this.cfg = cfg;
    this.driver = driver;
    this.maxModelLen = cfg.maxModelLen;
    this.modelName = cfg.modelName;
    this.blocks = new BlockManager(cfg.kvBlocks, cfg.profile.watermark, cfg.prefixCaching === true);
    this.scheduler = new Scheduler(
      cfg.profile, { maxNumSeqs: cfg.maxNumSeqs, maxNumBatchedTokens: cfg.maxNumBatchedTokens, ...(cfg.specDecode ? { specK: cfg.specDecode.k } : {}) },
      this.waiting, this.running, this.blocks,
    );
    this.rng = new Rng(cfg.seed);
    // Its own stream, so that turning speculative decoding on leaves the noise draws as they were.
    this.specRng = new Rng(cfg.seed ^ 0x5bd1e995);
    this.specQ = cfg.specDecode ? continuationProbability(cfg.specDecode) : 0;
    this.energy = cfg.power ? new EnergyLedger(cfg.power.gpus, cfg.power, driver.now()) : undefined;
  }

  submit(spec: SimRequestSpec, listener: SimRequestListener): SimRequestHandle {
    let prompt = Math.max(1, Math.floor(spec.promptTokens));
    let maxTokens = Math.max(1, Math.floor(spec.maxTokens));
    // The admit rules are about generation lengths; a pooling prompt only has to fit the context.
    if (this.cfg.admit && !spec.pooling) {
      const a = this.cfg.admit(prompt, maxTokens);
      if (!a.ok) throw new SimRejectedError(a.message, a.status);
      prompt = a.promptTokens;
      maxTokens = a.maxTokens;
    }
    if (prompt > this.maxModelLen) {
      throw new SimRejectedError(`prompt of ${prompt} tokens does not fit max_model_len ${this.maxModelLen}`);
    }
    let target = spec.pooling ? 0 : maxTokens;
    let reason: 'length' | 'stop' = spec.pooling ? 'stop' : 'length';
    if (!spec.pooling && !spec.ignoreEos && spec.naturalTokens !== undefined) {
      const natural = Math.max(1, Math.floor(Math.max(spec.naturalTokens, spec.minTokens ?? 0)));
      if (natural < target) {
        target = natural;
        reason = 'stop';
      }
    }
    // Generation stops at max_model_len, as vLLM does.
    if (!spec.pooling && prompt + target > this.maxModelLen) {
      target = Math.max(1, this.maxModelLen - prompt);
      reason = 'length';
    }
    // A prompt prefilled elsewhere (prefill/decode disaggregation, cluster/pd.ts) arrives with its KV: all but the last
    // prompt token stored, so its first step is one decode-sized step over the prompt that samples token 0 (no prefill
    // compute, nothing counted as a prompt here); it was parsed by the front already (no ingest).
    const prefilled = spec.prefilled === true;
    const seq: Seq = {
      id: this.nextId++, prompt, target, finishReason: reason, generated: 0, computed: prefilled ? prompt - 1 : 0, blocks: 0, state: 0,
      prefillStarted: prefilled, prefillDone: prefilled, preemptions: 0, listener, sharedHashes: [], cachedTokens: 0,
      ...(this.blocks.prefixCaching && spec.blockHashes && !prefilled ? { blockHashes: spec.blockHashes } : {}),
      ...(spec.visionFlops && !prefilled ? { visionFlops: spec.visionFlops } : {}),
    };
    const ingest = prefilled ? 0 : this.cfg.ingestMs * this.cfg.timeScale;
    if (ingest > 0) this.driver.schedule(this.driver.now() + ingest, () => this.enqueue(seq));
    else this.enqueue(seq);
    return { id: seq.id, cancel: () => this.cancel(seq) };
  }

  stats(): SimEngineStats {
    return {
      running: this.running.length,
      waiting: this.waiting.length,
      kvCacheUsage: this.blocks.total > 0 ? this.blocks.used / this.blocks.total : 0,
      kvBlocksTotal: this.blocks.total,
      preemptionsTotal: this.st.preemptionsTotal,
      promptTokensTotal: this.st.promptTokensTotal,
      generationTokensTotal: this.st.generationTokensTotal,
      requestsFinishedTotal: this.st.requestsFinishedTotal,
      stepsTotal: this.st.stepsTotal,
      prefixCacheQueryTokensTotal: this.blocks.queryTokensTotal,
      prefixCacheHitTokensTotal: this.blocks.hitTokensTotal,
      prefixCacheRecentHitRate: this.blocks.recentHitRate,
      specDraftTokensTotal: this.st.specDraftTokensTotal,
      specAcceptedTokensTotal: this.st.specAcceptedTokensTotal,
    };
  }

  /** Total engine busy time (ms), for utilisation figures. */
  get busyMs(): number {
    return this.st.busyMs;
  }

  private enqueue(seq: Seq): void {
    if (seq.state !== 0) return; // cancelled while ingesting
    seq.state = 1;
    this.waiting.push(seq);
    this.kick();
  }

  private cancel(seq: Seq): void {
    if (seq.state === 3) return;
    const was = seq.state;
    seq.state = 3;
    if (was === 1) this.waiting.remove(seq);
    if (was === 2) {
      const i = this.running.indexOf(seq);
      if (i >= 0) this.running.splice(i, 1);
    }
    this.blocks.release(seq);
    seq.listener.onFinish('abort', this.driver.now());
  }

  private kick(): void {
    if (this.busy) return;
    if (this.waiting.length === 0 && this.running.length === 0) return;
    this.startStep();
  }

  private startStep(): void {
    const now = this.driver.now();
    let batch: ScheduledBatch | null;
    for (;;) {
      batch = this.scheduler.next();
      if (!batch) return;
      for (const s of batch.rejected) this.finish(s, 'abort', now);
      for (const s of batch.preempted) {
        this.st.preemptionsTotal++;
        s.listener.onPreempt?.(now);
      }
      if (batch.seqs.length > 0) break;
      if (batch.preempted.length === 0 && batch.rejected.length === 0) return;
    }
    for (const s of batch.seqs) {
      if (!s.prefillStarted) {
        s.prefillStarted = true;
        // The vision encoder runs once, in the step that starts the prompt (its output is cached for later chunks).
        if (s.visionFlops) batch.summary.visionFlops = (batch.summary.visionFlops ?? 0) + s.visionFlops;
        this.st.promptTokensTotal += s.prompt;
        s.listener.onPrefillStart?.(now, s.cachedTokens);
      }
    }
    let dt = this.cfg.cost.stepMs(batch.summary);
    // Power follows the step's FLOPs and bytes relative to its length (before the time scale, which stretches both).
    const activity = this.energy ? this.cfg.cost.activity(batch.summary) : undefined;
    if (this.cfg.noiseSigma > 0) {
      const sg = this.cfg.noiseSigma;
      dt *= Math.exp(sg * this.rng.normal() - (sg * sg) / 2);
      // Rare host stalls (GC, Python, driver), so clients see realistic outliers.
      if (this.rng.next() < 1e-3) dt += 20 + this.rng.next() * 180;
    }
    if (this.energy && activity && this.cfg.power) this.energy.set(now, stepWatts(this.cfg.power, activity, dt / 1000));
    dt *= this.cfg.timeScale;
    this.busy = true;
    this.st.stepsTotal++;
    this.st.busyMs += dt;
    const b = batch;
    this.driver.schedule(now + dt, () => this.endStep(b));
  }

  private endStep(b: ScheduledBatch): void {
    const now = this.driver.now();
    // Idle until the next step starts (kick() below may start it at once).
    if (this.energy && this.cfg.power) this.energy.set(now, this.cfg.power.idleW);
    const emitAt = now + this.cfg.egressMs * this.cfg.timeScale;
    const emitted: Seq[] = [];
    const indexes: number[] = [];
    const counts: number[] = [];
    let finishedAny = false;
    for (let i = 0; i < b.seqs.length; i++) {
      const s = b.seqs[i] as Seq;
      // Cancelled meanwhile (preemption happens only between steps). A prompt-first chunked prefill
      // (SGLang) keeps its request at the head of the waiting queue (state 1) until the last chunk.
      if (s.state === 3) continue;
      const spec = this.cfg.specDecode !== undefined && s.prefillDone && b.tokens[i] === 1;
      s.computed += b.tokens[i] as number;
      if (s.blockHashes) this.blocks.register(s);
      if (s.computed < s.prompt + s.generated) continue; // partial prefill chunk
      if (!s.prefillDone) {
        s.prefillDone = true;
        s.listener.onPrefillEnd?.(now);
      }
      // Pooling (embeddings, target 0): the prompt's hidden states are the answer; it finishes with no token (count 0).
      let count = s.target === 0 ? 0 : 1;
      // A speculative decode emits its own token plus the drafts accepted (never past the request's end).
      if (spec && count > 0) {
        const k = this.cfg.specDecode?.k ?? 0;
        const accepted = drawAccepted(k, this.specQ, this.specRng);
        this.st.specDraftTokensTotal += k;
        this.st.specAcceptedTokensTotal += accepted;
        count = Math.min(1 + accepted, s.target - s.generated);
        s.computed += count - 1;
      }
      emitted.push(s);
      indexes.push(s.generated);
      counts.push(count);
      s.generated += count;
      this.st.generationTokensTotal += count;
      if (s.generated >= s.target) {
        s.state = 3;
        this.blocks.release(s);
        this.st.requestsFinishedTotal++;
        finishedAny = true;
      }
    }
    if (finishedAny) {
      let w = 0;
      for (const s of this.running) if (s.state === 2) this.running[w++] = s;
      this.running.length = w;
    }
    if (emitted.length > 0) {
      if (emitAt > now) this.driver.schedule(emitAt, () => this.emit(emitted, indexes, counts, emitAt));
      else this.emit(emitted, indexes, counts, now);
    }
    this.busy = false;
    this.kick();
  }

  private emit(seqs: Seq[], indexes: number[], counts: number[], at: number): void {
    for (let i = 0; i < seqs.length; i++) {
      const s = seqs[i] as Seq;
      const idx = indexes[i] as number;
      const n = counts[i] as number;
      // A pooling request finished with its prefill: no token, only the finish.
      if (n === 0) {
        s.listener.onFinish(s.finishReason, at);
        continue;
      }
      // A cancelled request stops streaming (a finished one has generated === target).
      if (s.state === 3 && s.generated < s.target) continue;
      // Tokens of one speculative step leave together (one frame where the listener can write one).
      if (n > 1 && s.listener.onTokens) s.listener.onTokens(idx, n, at);
      else for (let j = 0; j < n; j++) s.listener.onToken(idx + j, at);
      if (idx + n - 1 === s.target - 1) s.listener.onFinish(s.finishReason, at);
    }
  }

  private finish(s: Seq, reason: 'abort', at: number): void {
    s.state = 3;
    this.blocks.release(s);
    s.listener.onFinish(reason, at);
  }
}
