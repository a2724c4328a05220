/**
 * `inferbench sim`: the simulated engine behind a node:http server that speaks one engine's API.
 * Tokens are written at the times the engine plans them (RealTimeDriver on performance.now()), each
 * step's frames in one pass, one write per request per step; ground truth is kept per request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { configError } from '../../core/errors.js';
import { simHardwareHeaders } from '../../dialects/sim-hardware.js';
import type { LengthDist } from '../../workload/lengths.js';
import { createSimEngine, describeSimEngine, type SimEngineDescription } from '../create.js';
import { RealTimeDriver, type PacingStats } from '../des/real-time-driver.js';
import { SimRejectedError } from '../engine/engine.js';
import { findEngineProfile } from '../engine/profiles.js';
import type { SpecDecode } from '../engine/spec-decode.js';
import type { SimEngine } from '../types.js';
import { findModel } from '../catalog/index.js';
import { poolingFanIn } from '../wire/embeddings.js';
import { wireFor } from '../wire/index.js';
import { blockHashes, promptTokenIds } from '../wire/prompt-hash.js';
import { readImages, type ImageUse } from '../wire/vision.js';
import type { EngineWire, FinishReason, GenIdentity, GenPlan, HttpReply, LiveStats, Route, WireContext } from '../wire/types.js';
import { ActiveRequest } from './active-request.js';
import { createPdEngine, type KvTransferLink, type PdSplit } from '../cluster/pd.js';
import { PREFILL_REPLICA_HEADER, REPLICA_HEADER } from '../cluster/replica-header.js';
import { expectedOutput, identity, naturalTokens } from './generation.js';
import { matchRoute, readBody } from './http-util.js';
import { energyReply } from './energy-route.js';
import { dcgmMetricLines } from '../wire/dcgm.js';
import { renderMetrics } from '../wire/metrics.js';
import { decideFault, NO_FAULTS, parseFaultSpec, type FaultSpec } from './faults.js';
import { DEFAULT_TRUTH_LIMITS, TruthStore, type EmissionStats, type TruthLimits, type TruthRecord } from './truth.js';

export interface SimServerOptions {
  /** Any engine name `predict` accepts (SIM_ENGINE_NAMES, ids and aliases); the profile picks the wire. */
  engine: string;
  /** Served model name; must be in the sim catalog. */
  model: string;
  gpu: string;
  gpus: number;
  quant?: string;
  /** KV-cache element type (auto | fp8 | int8); undefined: the model's implied one. */
  kvCacheDtype?: string;
  host?: string;
  /** 0 = any free port. */
  port?: number;
  seed?: number;
  /** A FaultSpec or its string form (see parseFaultSpec). */
  faults?: FaultSpec | string;
  /** Multiplies all engine time (0 = infinitely fast engine). */
  modelTimeScale?: number;
  /** Lognormal σ of per-step noise. */
  noise?: number;
  maxModelLen?: number;
  /** Override the engine's batch limit (e.g. to put 1,000 streams in one batch). */
  maxNumSeqs?: number;
  /** llama.cpp's -c: the KV tokens split over the slots (SimEngineOptions.ctxSize). */
  ctxSize?: number;
  truthLimits?: TruthLimits;
  /** Each request first generates this many reasoning tokens (in the engine's reasoning field), then its answer. */
  reasoningTokens?: LengthDist;
  /** Speculative decoding: K draft tokens per decode step with this acceptance rate. */
  specDecode?: SpecDecode;
  /** false turns off the prefix cache of engines that have one (vLLM V1, SGLang). */
  prefixCaching?: boolean;
  /** OpenAI-route usage reports prompt_tokens_details.cached_tokens (vLLM --enable-prompt-tokens-details). */
  promptTokensDetails?: boolean;
  /** Prefill/decode disaggregation: P prefill and D decode engines behind this one server (cluster/pd.ts). */
  pd?: PdSplit;
}

export interface SimTruth {
  /** A request in flight or still retained. */
  get(id: number): TruthRecord | undefined;
  /** Finished requests with finish sequence > since, in finish order. */
  finished(since?: number): TruthRecord[];
  readonly inFlight: number;
  readonly dropped: number;
  /** Lateness of streamed token writes (written − planned). */
  emission(): EmissionStats;
  /** Lateness of the engine's event pacing. */
  pacing(): PacingStats;
}

export interface SimServer {
  url: string;
  port: number;
  truth: SimTruth;
  engine: SimEngine;
  /** `pd`: the deployment's KV transfer link. */
  pdLink?: KvTransferLink;
  description: SimEngineDescription;
  close(): Promise<void>;
}

export async function startSimServer(options: SimServerOptions): Promise<SimServer> {
  const faults = typeof options.faults === 'string' ? parseFaultSpec(options.faults) : (options.faults ?? NO_FAULTS);
  const seed = options.seed ?? 1;
  const engineOpts = { engine: options.engine, model: options.model, gpu: options.gpu, gpus: options.gpus, quant: options.quant, ...(options.kvCacheDtype !== undefined ? { kvCacheDtype: options.kvCacheDtype } : {}), seed, modelTimeScale: options.modelTimeScale, noise: options.noise, maxModelLen: options.maxModelLen, maxNumSeqs: options.maxNumSeqs, ...(options.ctxSize !== undefined ? { ctxSize: options.ctxSize } : {}), ...(options.prefixCaching === false ? { prefixCaching: false } : {}), ...(options.specDecode ? { specDecode: options.specDecode } : {}) };
  const description = describeSimEngine(engineOpts);
  // After describeSimEngine, which reports an unknown engine together with any other bad option.
  const profile = findEngineProfile(options.engine);
  const driver = new RealTimeDriver({ speed: 1 });
  const pd = options.pd ? createPdEngine(engineOpts, options.pd, driver) : undefined;
  const engine = pd ?? createSimEngine(engineOpts, driver);
  const wire: EngineWire = wireFor(profile.wire);
  const ctx: WireContext = { engine: profile.wire, model: options.model, maxModelLen: engine.maxModelLen, gpu: options.gpu, gpus: options.gpus, quant: options.quant, startedAtSec: Math.floor(Date.now() / 1000),
    prefixCaching: description.prefixCaching, promptTokensDetails: options.promptTokensDetails === true,
    ...(options.specDecode ? { specDecode: { k: options.specDecode.k } } : {}), hiddenSize: findModel(options.model).spec.hidden };
  // A vision-language model reads images (catalog `vision`); a text-only one answers them with its 400.
  const vision = findModel(options.model).spec.vision;
  const truth = new TruthStore(options.truthLimits ?? DEFAULT_TRUTH_LIMITS);
  const active = new Set<ActiveRequest>();
  let nextId = 1;
  let requestsTotal = 0;
  let failedTotal = 0;

  const liveStats = (): LiveStats => ({ ...engine.stats(), requestsTotal, requestsFailedTotal: failedTotal });

  const send = (res: ServerResponse, reply: HttpReply, extra?: Record<string, string>): void => {
    const headers: Record<string, string> = { ...wire.commonHeaders, ...reply.headers, ...extra };
    // empty plain bodies are what these servers send (no chunked encoding)
    headers['content-length'] = String(Buffer.byteLength(reply.body));
    res.writeHead(reply.status, headers);
    res.end(res.req.method === 'HEAD' ? undefined : reply.body);
  };

  const simRoutes = (res: ServerResponse, path: string, query: URLSearchParams): boolean => {
    if (path === '/metrics') {
      // The simulated GPUs' power and energy follow the engine's own metrics, named as a DCGM exporter names them.
      const power = engine.energy ? renderMetrics(dcgmMetricLines(engine.energy, driver.now(), `NVIDIA ${description.gpu}`)) : '';
      send(res, { status: 200, headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }, body: wire.metrics(ctx, liveStats()) + power });
      return true;
    }
    if (path === '/sim/v1/energy') {
      send(res, energyReply(engine.energy, driver, query));
      return true;
    }
    if (path === '/sim/v1/trace') {
      const since = Number(query.get('since') ?? '0');
      const lines = truth.finished(Number.isFinite(since) ? since : 0).map((r) => JSON.stringify(r) + '\n');
      send(res, { status: 200, headers: { 'content-type': 'application/x-ndjson' }, body: lines.join('') });
      return true;
    }
    const m = /^\/sim\/v1\/requests\/(\d+)$/.exec(path);
    if (m) {
      const rec = truth.get(Number(m[1]));
      send(res, rec ? { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(rec) } : { status: 404, headers: { 'content-type': 'application/json' }, body: '{"error":"unknown request id"}' });
      return true;
    }
    if (path === '/sim/v1/info') {
      send(res, { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...description, wire: wire.kind, wireVersion: wire.version, emission: truth.emission(), pacing: driver.pacing(), truthDropped: truth.dropped }) });
      return true;
    }
    return false;
  };

  const generate = (req: IncomingMessage, res: ServerResponse, path: string, plan: GenPlan, id: GenIdentity, arrivalMs: number, body: unknown, images?: ImageUse): void => {
    const rid = { 'x-sim-request-id': String(id.seq) };
    const rec: TruthRecord = {
      id: id.seq, seq: 0, method: req.method ?? 'POST', path, stream: plan.stream, status: 200, promptTokens: plan.promptTokens, maxTokens: plan.maxTokens,
      ignoreEos: plan.ignoreEos, arrivalMs, prefillStartMs: null, prefillEndMs: null, plannedMs: [], writtenMs: [], finishedMs: null, finishReason: null,
      preemptions: 0, fault: null, outcome: null,
    };
    truth.open(rec);
    const fault = decideFault(faults, seed, id.seq);
    if (fault) rec.fault = fault.kind;
    if (fault && (fault.kind === '429' || fault.kind === '500' || fault.kind === '503')) {
      const status = Number(fault.kind);
      const message = status === 429 ? 'Too many requests' : status === 503 ? 'Service Unavailable' : 'Internal server error';
      const extra: Record<string, string> = status === 429 ? { ...rid, 'retry-after': String(faults.retryAfterS) } : rid;
      rec.status = status;
      rec.outcome = 'fault';
      rec.finishedMs = performance.now();
      failedTotal++;
      send(res, wire.errorReply(status, message, path), extra);
      truth.close(rec);
      return;
    }
    // The model thinks first, then answers at its own length; max_tokens bounds both together.
    const natural = (id.reasoning ?? 0) + naturalTokens(seed, id.seq);
    // Embeddings generate nothing: the reply is written when the last input's prefill is done.
    const expected = plan.poolingInputs ? { tokens: 0, reason: 'stop' as const } : expectedOutput(plan, natural, engine.maxModelLen);
    const headers: Record<string, string> = { ...wire.commonHeaders, ...rid };
    const ar = new ActiveRequest({
      res, rec, plan, truth, headers, fault, faults, expectedTokens: expected.tokens, expectedReason: expected.reason,
      prefixCaching: description.prefixCaching,
      onDone: () => {
        active.delete(ar);
        if (rec.outcome !== 'completed') failedTotal++;
      },
    });
    active.add(ar);
    try {
      // The prefix cache works on the prompt's own tokens: what the sim's tokenizer makes of the text sent.
      const pooled = plan.poolingInputs;
      if (pooled) {
        ar.handle = poolingFanIn(pooled, ar, (promptTokens, each) => engine.submit({ promptTokens, maxTokens: 0, ignoreEos: true, pooling: true }, each));
        ar.start();
        return;
      }
      const ids = description.prefixCaching ? promptTokenIds(body) : undefined;
      const hashes = ids ? { blockHashes: blockHashes(ids) } : {};
      const encoder = images ? { visionFlops: images.encoderFlops } : {};
      ar.handle = engine.submit({ promptTokens: plan.promptTokens, maxTokens: plan.maxTokens, ignoreEos: plan.ignoreEos, minTokens: plan.minTokens, naturalTokens: natural, ...hashes, ...encoder }, ar);
      // P/D: the decode engine streams the reply (x-sim-replica, as a cluster's router names its pick), the prefill engine beside it.
      const route = ar.handle.route;
      if (route) {
        headers[REPLICA_HEADER] = String(route.decode);
        headers[PREFILL_REPLICA_HEADER] = String(route.prefill);
        rec.prefillReplica = route.prefill;
        rec.decodeReplica = route.decode;
      }
      ar.start();
    } catch (err) {
      if (!(err instanceof SimRejectedError)) throw err;
      active.delete(ar);
      rec.outcome = 'rejected';
      rec.status = err.status;
      truth.close(rec);
      failedTotal++;
      if (!res.headersSent) send(res, wire.errorReply(err.status, err.message, path), rid);
      else res.destroy();
    }
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://sim');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (method === 'GET' && simRoutes(res, path, url.searchParams)) return;
    const hit = matchRoute(wire.routes, method, path);
    if (!hit) {
      req.resume();
      return send(res, wire.notFound(method, path));
    }
    let body: unknown;
    if (method === 'POST' || method === 'PUT') {
      const raw = await readBody(req);
      if (raw === undefined) return send(res, wire.errorReply(413, 'request body too large', path));
      if (raw.trim() !== '') {
        try {
          body = JSON.parse(raw);
        } catch (err) {
          return send(res, wire.badJson(path, (err as Error).message));
        }
      }
    }
    const input = { method, path, params: hit.params, query: url.searchParams, body };
    if (hit.route.kind === 'static') return send(res, hit.route.handle(ctx, input, liveStats()));
    const arrivalMs = performance.now();
    const id = identity(seed, nextId++, options.reasoningTokens);
    requestsTotal++;
    // Images are read before the engine's handler counts the prompt: their tokens are noted for it (wire/vision.ts).
    const images = readImages(body, options.model, vision, profile.wire);
    const out = images.ok ? hit.route.handle(ctx, input, id) : wire.errorReply(400, images.message, path);
    if ('encoder' in out) return generate(req, res, path, out, id, arrivalMs, body, images.ok ? images.use : undefined);
    failedTotal++;
    const rec: TruthRecord = {
      id: id.seq, seq: 0, method, path, stream: false, status: out.status, promptTokens: 0, maxTokens: 0, ignoreEos: false, arrivalMs, prefillStartMs: null,
      prefillEndMs: null, plannedMs: [], writtenMs: [], finishedMs: performance.now(), finishReason: null, preemptions: 0, fault: null, outcome: 'rejected',
    };
    truth.open(rec);
    truth.close(rec);
    send(res, out, { 'x-sim-request-id': String(id.seq) });
  };

  // Every reply says what hardware is simulated (as a real engine reports its version): a run records it as its GPU.
  const hardware = Object.entries(simHardwareHeaders({ gpu: description.gpu, gpus: description.gpus, quant: description.quant }));
  const server: Server = createServer({ keepAlive: true, noDelay: true, requestTimeout: 0, headersTimeout: 60_000 }, (req, res) => {
    for (const [name, value] of hardware) res.setHeader(name, value);
    onRequest(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, wire.errorReply(500, `internal error: ${String(err)}`, req.url ?? '/'));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s: Socket) => s.setNoDelay(true));
  server.on('clientError', (_err, socket: Socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? configError(`port ${options.port ?? 0} on ${options.host ?? '127.0.0.1'} is in use`, 'pick another --port') : err),
    );
    server.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0, backlog: 4096 }, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    engine,
    description,
    ...(pd ? { pdLink: pd.link } : {}),
    truth: {
      get: (id) => truth.get(id),
      finished: (since) => truth.finished(since),
      get inFlight() {
        return truth.inFlight;
      },
      get dropped() {
        return truth.dropped;
      },
      emission: () => truth.emission(),
      pacing: () => driver.pacing(),
    },
    close: async () => {
      driver.close();
      for (const ar of [...active]) ar.handle?.cancel();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
