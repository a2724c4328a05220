/**
 * Prefill/decode disaggregation (`sim --pd P:D`, `predict --pd P:D`; issue 34 item 3): P prefill engines and D decode
 * engines on one clock behind one front, as vLLM's disaggregated prefill, SGLang's PD mode, llm-d and Dynamo deploy them.
 * The same PdEngine answers the HTTP sim (real-time driver) and predict (virtual clock), so the two agree.
 *
 * A request's way through it:
 * 1. Both engines are picked when it arrives (least requests in flight in each pool, ties in turn), as llm-d's scheduler
 *    and vLLM's disaggregation proxy pick the pair up front; the front names them in its response headers.
 * 2. The prefill engine runs the prompt as a prefill-only request (the engine's pooling mode: its own scheduler, KV
 *    cache, prefix cache and chunked prefill; it samples nothing and emits nothing).
 * 3. When the prefill's last step ends, the prompt's KV goes to the decode engine: each of the prefill engine's tp GPUs
 *    sends its shard to the same rank of the decode engine over the GPU's own link, all ranks at once, so the time is
 *    α + prompt tokens × KV bytes per token per GPU / β (kvTransferMs). One prefill engine's transfers go one after
 *    another (its link is busy until the previous one is done).
 * 4. The decode engine admits the sequence with its KV already computed (Engine.submit with `prefilled`): it waits in
 *    the queue until the engine's scheduler finds KV blocks for it, then decodes; its first step samples token 0, which
 *    the decode side streams. TTFT = prefill queue + prefill + transfer + decode queue + the first decode step.
 */
import { configError } from '../../core/errors.js';
import { DEFAULT_CALIBRATION } from '../calibrate/constants.js';
import type { Calibration } from '../calibrate/types.js';
import { kvBytesPerTokenPerGpu } from '../catalog/models.js';
import type { LinkKind } from '../catalog/types.js';
import { resolveSimEngine, type ResolvedSimEngine, type SimEngineOptions } from '../create.js';
import { linkConstants } from '../cost/step-cost.js';
import type { SimDriver } from '../des/driver.js';
import { Engine, SimRejectedError, type EngineConfig } from '../engine/engine.js';
import type { SimEngine, SimEngineStats, SimRequestHandle, SimRequestListener, SimRequestSpec } from '../types.js';
import { SimRouter } from './router.js';

/** GPUs in one node (an HGX/DGX board): a deployment of more spans nodes. */
export const GPUS_PER_NODE = 8;
/** At most this many engines behind one port, as `--replicas`. */
const MAX_ENGINES = 64;

/** P prefill engines and D decode engines, each of the deployment's tensor-parallel degree. */
export interface PdSplit {
  prefill: number;
  decode: number;
}

/** `--pd P:D`: whole numbers ≥ 1; a bad value is one usage line. */
export function parsePdSplit(raw: string): PdSplit {
  const m = /^(\d+):(\d+)$/.exec(raw.trim());
  const prefill = m ? Number(m[1]) : Number.NaN;
  const decode = m ? Number(m[2]) : Number.NaN;
  if (!(prefill >= 1 && decode >= 1)) throw configError(`--pd ${raw}: give P:D, whole numbers of prefill and decode engines from 1 up (e.g. --pd 1:3)`);
  if (prefill + decode > MAX_ENGINES) throw configError(`--pd ${raw}: at most ${MAX_ENGINES} engines behind one port`);
  return { prefill, decode };
}

/** `--pd` takes the place of `--replicas`/`--router` (it is its own router): one line when both are given. */
export function checkPdAlone(pd: unknown, replicas: unknown, router: unknown): void {
  if (pd === undefined || (replicas === undefined && router === undefined)) return;
  throw configError(`--pd P:D routes requests itself (least load in each pool); give it without ${replicas !== undefined ? '--replicas' : '--router'}`);
}

/** predict's `--pd` (and its conflicts) from the raw flags: the split, or nothing without the flag. */
export function readPdFlags(flags: Record<string, unknown>): { pd?: PdSplit } {
  checkPdAlone(flags['pd'], flags['replicas'], flags['router']);
  return typeof flags['pd'] === 'string' ? { pd: parsePdSplit(flags['pd']) } : {};
}

/** What carries a prompt's KV from a prefill engine to a decode engine. */
export interface KvTransferLink {
  /** The GPU's link kind (catalog/hardware.ts), or `custom` for an override. */
  kind: LinkKind | 'custom';
  /** Latency per transfer (µs) and bandwidth per GPU (GB/s). */
  alphaUs: number;
  betaGBs: number;
  /** KV bytes per prompt token that each GPU of the prefill engine sends to its peer rank (the model's KV at its dtype, split over tp). */
  bytesPerTokenPerGpu: number;
  /** (P + D) × tp GPUs are more than one node holds: the catalog has no network figures, so this is the GPU's own link (an optimistic bound). */
  spansNodes: boolean;
  /** Multiplies the transfer time, as the engines' time (--model-time-scale). */
  timeScale: number;
}

/**
 * The transfer link of a P/D deployment of this engine: the GPU's link constants (linkConstants: the fitted all-reduce
 * α/β where calibrated, else the link kind's priors) and the model's KV bytes per token per GPU at its KV dtype.
 * `override` replaces α or β (a what-if: a cross-node network, a slower link).
 */
export function kvTransferLink(
  r: ResolvedSimEngine, split: PdSplit, cal: Calibration = DEFAULT_CALIBRATION, override: { alphaUs?: number; betaGBs?: number } = {},
): KvTransferLink {
  const span = (split.prefill + split.decode) * r.description.gpus;
  const base = linkConstants(r.hardware, cal, span);
  const custom = override.alphaUs !== undefined || override.betaGBs !== undefined;
  const crossesPcie = r.hardware.nvlinkGroup !== undefined && span > r.hardware.nvlinkGroup;
  return {
    kind: custom ? 'custom' : crossesPcie ? 'pcie' : r.hardware.link,
    alphaUs: override.alphaUs ?? base.alphaUs,
    betaGBs: override.betaGBs ?? base.betaGBs,
    bytesPerTokenPerGpu: kvBytesPerTokenPerGpu(r.model, r.description.gpus, r.description.kvCacheDtype),
    spansNodes: span > GPUS_PER_NODE,
    timeScale: r.config.timeScale,
  };
}

/** Milliseconds to move `tokens` tokens of KV over the link: α + tokens × bytes per token per GPU / β, times the time scale. */
export function kvTransferMs(link: KvTransferLink, tokens: number): number {
  return (link.alphaUs / 1000 + (tokens * link.bytesPerTokenPerGpu) / (link.betaGBs * 1e6)) * link.timeScale;
}

/** One line on the link, for banners and predict's header. */
export function describePd(split: PdSplit, link: KvTransferLink, gpus: number): string {
  const kb = link.bytesPerTokenPerGpu / 1024;
  const span = link.spansNodes ? `; ${(split.prefill + split.decode) * gpus} GPUs span more than one ${GPUS_PER_NODE}-GPU node, but the catalog has no network figures, so the transfer is timed at the GPU's own link (optimistic)` : '';
  return `prefill/decode disaggregation: ${split.prefill} prefill + ${split.decode} decode engines of ${gpus} GPU${gpus > 1 ? 's' : ''} each; ` +
    `KV moves over ${link.kind} (${+link.alphaUs.toFixed(1)} µs + ${+kb.toFixed(1)} KiB per token per GPU at ${+link.betaGBs.toFixed(1)} GB/s)${span}`;
}

type Stage = 'prefill' | 'transfer' | 'decode' | 'done';

/** P prefill and D decode engines on one driver, answering as one engine (SimEngine) would. */
export class PdEngine implements SimEngine {
  readonly maxModelLen: number;
  readonly modelName: string;
  /** No power figures under P/D yet (each engine would keep its own ledger). */
  readonly energy = undefined;
  readonly prefill: readonly Engine[];
  readonly decode: readonly Engine[];
  private readonly prefillRouter: SimRouter;
  private readonly decodeRouter: SimRouter;
  /** When each prefill engine's link is free for its next transfer. */
  private readonly linkFreeAt: number[];
  private readonly admit: EngineConfig['admit'];
  private nextId = 1;

  constructor(
    config: EngineConfig,
    private readonly driver: SimDriver,
    readonly split: PdSplit,
    readonly link: KvTransferLink,
  ) {
    // The front's length rules are applied once, here; each engine its own seed, as the replicas of a cluster.
    const { admit, power: _power, ...engine } = config;
    this.admit = admit;
    this.prefill = Array.from({ length: split.prefill }, (_, i) => new Engine({ ...engine, seed: config.seed + i }, driver));
    this.decode = Array.from({ length: split.decode }, (_, i) => new Engine({ ...engine, seed: config.seed + split.prefill + i }, driver));
    this.prefillRouter = new SimRouter(split.prefill, 'least-load');
    this.decodeRouter = new SimRouter(split.decode, 'least-load');
    this.linkFreeAt = new Array<number>(split.prefill).fill(-Infinity);
    this.maxModelLen = config.maxModelLen;
    this.modelName = config.modelName;
  }

  submit(spec: SimRequestSpec, listener: SimRequestListener): SimRequestHandle {
    const p = this.prefillRouter.pick(undefined);
    // An embeddings input is a prefill and nothing more: the prefill engine answers it.
    if (spec.pooling) return { ...(this.prefill[p] as Engine).submit(spec, listener), route: { prefill: p, decode: 0 } };
    let prompt = Math.max(1, Math.floor(spec.promptTokens));
    let maxTokens = Math.max(1, Math.floor(spec.maxTokens));
    if (this.admit) {
      const a = this.admit(prompt, maxTokens);
      if (!a.ok) throw new SimRejectedError(a.message, a.status);
      prompt = a.promptTokens;
      maxTokens = a.maxTokens;
    }
    const d = this.decodeRouter.pick(undefined);
    let stage: Stage = 'prefill';
    let decodeHandle: SimRequestHandle | undefined;
    const release = (): void => {
      if (stage === 'prefill' || stage === 'transfer') this.prefillRouter.ended(p);
      this.decodeRouter.ended(d);
      stage = 'done';
    };
    const decodeSpec: SimRequestSpec = {
      promptTokens: prompt, maxTokens, ignoreEos: spec.ignoreEos, prefilled: true,
      ...(spec.minTokens !== undefined ? { minTokens: spec.minTokens } : {}),
      ...(spec.naturalTokens !== undefined ? { naturalTokens: spec.naturalTokens } : {}),
    };
    const decodeListener: SimRequestListener = {
      onToken: (i, at) => listener.onToken(i, at),
      ...(listener.onTokens ? { onTokens: (from: number, count: number, at: number) => listener.onTokens?.(from, count, at) } : {}),
      onPreempt: (at) => listener.onPreempt?.(at),
      onFinish: (reason, at) => {
        if (stage === 'done') return;
        release();
        listener.onFinish(reason, at);
      },
    };
    const startDecode = (at: number): void => {
      if (stage !== 'transfer') return; // cancelled during the transfer
      this.prefillRouter.ended(p);
      stage = 'decode';
      listener.onTransferEnd?.(at);
      decodeHandle = (this.decode[d] as Engine).submit(decodeSpec, decodeListener);
    };
    const prefillListener: SimRequestListener = {
      onPrefillStart: (at, cached) => listener.onPrefillStart?.(at, cached),
      onPreempt: (at) => listener.onPreempt?.(at),
      onPrefillEnd: (at) => {
        if (stage !== 'prefill') return;
        listener.onPrefillEnd?.(at);
        stage = 'transfer';
        const from = Math.max(at, this.linkFreeAt[p] as number);
        const end = from + kvTransferMs(this.link, prompt);
        this.linkFreeAt[p] = end;
        this.driver.schedule(end, () => startDecode(end));
      },
      onToken: () => undefined,
      // A prefill-only request finishes after its prefill ('stop', ignored: the transfer has started); 'abort' is a
      // cancel, or a prompt the prefill engine's KV cache can never hold.
      onFinish: (reason, at) => {
        if (reason !== 'abort' || stage !== 'prefill') return;
        release();
        listener.onFinish('abort', at);
      },
    };
    this.prefillRouter.started(p);
    this.decodeRouter.started(d);
    let prefillHandle: SimRequestHandle;
    try {
      prefillHandle = (this.prefill[p] as Engine).submit(
        { promptTokens: prompt, maxTokens: 0, ignoreEos: true, pooling: true,
          ...(spec.blockHashes ? { blockHashes: spec.blockHashes } : {}), ...(spec.visionFlops ? { visionFlops: spec.visionFlops } : {}) },
        prefillListener,
      );
    } catch (err) {
      release();
      throw err;
    }
    const cancel = (): void => {
      if (stage === 'prefill') return prefillHandle.cancel();
      if (stage === 'decode') return decodeHandle?.cancel();
      if (stage === 'transfer') {
        release();
        listener.onFinish('abort', this.driver.now());
      }
    };
    return { id: this.nextId++, cancel, route: { prefill: p, decode: d } };
  }

  /**
   * One engine's counters, as a client's telemetry sees one server: sums over all engines (prompts are counted by the
   * prefill engines, generated tokens by the decode engines), finished requests from the decode side only (a prefill
   * finishing is not a request finishing), KV usage averaged over all, the prefix hit rate over the prefill engines.
   */
  stats(): SimEngineStats {
    const all = [...this.prefill, ...this.decode].map((e) => e.stats());
    const sum = (k: keyof SimEngineStats, from = all): number => from.reduce((a, s) => a + s[k], 0);
    const prefill = all.slice(0, this.prefill.length);
    return {
      running: sum('running'), waiting: sum('waiting'), kvCacheUsage: sum('kvCacheUsage') / all.length, kvBlocksTotal: sum('kvBlocksTotal'),
      preemptionsTotal: sum('preemptionsTotal'), promptTokensTotal: sum('promptTokensTotal'), generationTokensTotal: sum('generationTokensTotal'),
      requestsFinishedTotal: sum('requestsFinishedTotal', all.slice(this.prefill.length)), stepsTotal: sum('stepsTotal'),
      prefixCacheQueryTokensTotal: sum('prefixCacheQueryTokensTotal'), prefixCacheHitTokensTotal: sum('prefixCacheHitTokensTotal'),
      prefixCacheRecentHitRate: sum('prefixCacheRecentHitRate', prefill) / prefill.length,
      specDraftTokensTotal: sum('specDraftTokensTotal'), specAcceptedTokensTotal: sum('specAcceptedTokensTotal'),
    };
  }
}

/** The P/D deployment of an engine on a driver (`sim --pd`: the real-time driver), its link from the engine's catalog entry and calibration. */
export function createPdEngine(opts: SimEngineOptions, split: PdSplit, driver: SimDriver): PdEngine {
  const r = resolveSimEngine(opts);
  return new PdEngine(r.config, driver, split, kvTransferLink(r, split, opts.calibration));
}
