import { configError } from '../core/errors.js';
import { parseNumber, type Problems } from '../config/parse.js';
import { parseKvCacheDtypeFlag } from '../config/kv-cache-dtype.js';
import { loadCatalogFile } from '../sim/catalog/load-file.js';
import { resolveSimEngine } from '../sim/create.js';
import { kvCapacityWarning } from '../sim/limits.js';
import { startSimServer, type SimServer } from '../sim/server/index.js';
import { startSimCluster } from '../sim/cluster/cluster.js';
import type { RouterPolicy } from '../sim/cluster/router.js';
import { checkPdAlone, describePd, parsePdSplit } from '../sim/cluster/pd.js';
import { DEFAULT_SIM } from './defaults.js';
import { parseLengthDist } from '../workload/lengths.js';
import { parseSpecDecode } from '../sim/engine/spec-decode.js';
import { readSlotFlags } from './llamacpp-flags.js';

export interface SimFlags {
  engine: string;
  model: string;
  gpu: string;
  gpus: string;
  quant?: string;
  kvCacheDtype?: string;
  host: string;
  port: string;
  faults?: string;
  seed: string;
  modelTimeScale?: string;
  /** The old name of --model-time-scale, still accepted (scripts and docs use it). */
  timeScale?: string;
  maxNumSeqs?: string;
  catalog?: string[];
  /** Commander's negation of --no-prefix-caching: false when given. */
  prefixCaching?: boolean;
  enablePromptTokensDetails?: boolean;
  reasoningTokens?: string;
  specDecode?: string;
  replicas?: string;
  router?: string;
  /** `--pd P:D`: prefill/decode disaggregation (sim/cluster/pd.ts). */
  pd?: string;
}

/** `--model-time-scale X`, or its old name `--time-scale X` (kept: scripts and docs use it). */
export function modelTimeScale(flags: Pick<SimFlags, 'modelTimeScale' | 'timeScale'>, p: Problems): number | undefined {
  if (flags.modelTimeScale !== undefined && flags.timeScale !== undefined) {
    p.push('--time-scale is the old name of --model-time-scale; give one of them');
    return undefined;
  }
  const [flag, raw] = flags.timeScale !== undefined ? ['--time-scale', flags.timeScale] : ['--model-time-scale', flags.modelTimeScale];
  return parseNumber(flag, raw, p, { min: 0 });
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** `inferbench sim`: serve the simulated engine on loopback until Ctrl-C. */
export async function simCommand(flags: SimFlags, io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream }): Promise<number> {
  checkPdAlone(flags.pd, flags.replicas, flags.router);
  const p: Problems = [];
  const gpus = parseNumber('--gpus', flags.gpus, p, { integer: true, positive: true });
  const port = parseNumber('--port', flags.port, p, { integer: true, min: 0 });
  const seed = parseNumber('--seed', flags.seed, p, { integer: true, min: 0 });
  const timeScale = modelTimeScale(flags, p);
  const slots = readSlotFlags(flags as unknown as Record<string, unknown>);
  const maxNumSeqs = parseNumber('--max-num-seqs', flags.maxNumSeqs, p, { integer: true, positive: true }) ?? slots.maxNumSeqs;
  const kvCacheDtype = parseKvCacheDtypeFlag(flags.kvCacheDtype, p);
  if (port !== undefined && port > 65535) p.push(`--port ${port} is not a TCP port (0–65535)`);
  if (!LOOPBACK.has(flags.host)) p.push(`--host ${flags.host}: the simulator serves loopback only (127.0.0.1, localhost or ::1)`);
  const replicas = parseNumber('--replicas', flags.replicas, p, { integer: true, positive: true });
  if (replicas !== undefined && replicas > 64) p.push(`--replicas ${replicas}: at most 64 engines behind one port`);
  if (flags.router !== undefined && replicas === undefined) p.push('--router picks among several engines; give --replicas N too');
  if (p.length > 0) throw configError(p.join('; '));
  const pd = flags.pd !== undefined ? parsePdSplit(flags.pd) : undefined;
  for (const file of flags.catalog ?? []) loadCatalogFile(file);

  const serverOptions = {
    engine: flags.engine,
    model: flags.model,
    gpu: flags.gpu,
    gpus: gpus ?? DEFAULT_SIM.gpus,
    ...(flags.quant ? { quant: flags.quant } : {}),
    ...(kvCacheDtype ? { kvCacheDtype } : {}),
    host: flags.host,
    port: port ?? 0,
    seed: seed ?? 1,
    ...(flags.faults ? { faults: flags.faults } : {}),
    ...(timeScale !== undefined ? { modelTimeScale: timeScale } : {}),
    ...(maxNumSeqs !== undefined ? { maxNumSeqs } : {}),
    ...(slots.ctxSize !== undefined ? { ctxSize: slots.ctxSize } : {}),
    ...(flags.prefixCaching === false ? { prefixCaching: false } : {}),
    ...(flags.enablePromptTokensDetails ? { promptTokensDetails: true } : {}),
    ...(flags.reasoningTokens !== undefined ? { reasoningTokens: parseLengthDist(flags.reasoningTokens, '--reasoning-tokens') } : {}),
    ...(flags.specDecode !== undefined ? { specDecode: parseSpecDecode(flags.specDecode) } : {}),
    ...(pd ? { pd } : {}),
  };
  const cluster = replicas !== undefined && replicas > 1 ? await startSimCluster({ ...serverOptions, replicas, router: (flags.router ?? 'round-robin') as RouterPolicy }) : undefined;
  const server: Pick<SimServer, 'url' | 'description' | 'close' | 'pdLink'> = cluster ? { url: cluster.url, description: (cluster.replicas[0] as SimServer).description, close: () => cluster.close() } : await startSimServer(serverOptions);
  const d = server.description;
  const warning = kvCapacityWarning(resolveSimEngine({ engine: flags.engine, model: d.model, gpu: d.gpu, gpus: d.gpus, quant: d.quant, kvCacheDtype: d.kvCacheDtype, maxNumSeqs: d.maxNumSeqs, ...(slots.ctxSize !== undefined ? { ctxSize: slots.ctxSize } : {}) }));
  if (warning) io.stderr.write(`${warning}\n`);
  io.stdout.write(
    `inferbench sim: ${d.engineLabel} serving ${d.model} (${d.quant}) on ${d.gpus}× ${d.gpu} at ${server.url}\n` +
      `  max_model_len ${d.maxModelLen}, KV cache ${d.kvTokens} tokens${d.kvCacheDtype !== 'auto' ? ` ${d.kvCacheDtype}` : ''}, max ${d.maxNumSeqs} sequences${d.prefixCaching ? ', prefix caching' : ''}; ground truth at ${server.url}/sim/v1/trace; metrics at ${server.url}/metrics\n` +
      (pd && server.pdLink ? `  ${describePd(pd, server.pdLink, d.gpus)}; each engine as above; the decode engine in x-sim-replica, the prefill engine in x-sim-prefill-replica\n` : '') +
      (cluster ? `  ${cluster.replicas.length} replicas behind ${cluster.url}, each with its own KV cache and prefix cache; router ${flags.router ?? 'round-robin'}, its pick in the x-sim-replica response header (run --replica-header x-sim-replica)\n` : '') +
      `${scaleLine(timeScale)}  press Ctrl-C to stop\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  io.stderr.write('inferbench sim: stopped\n');
  return 0;
}

/** The banner's word on --model-time-scale: a deployment made slower (or faster) than the catalog on purpose. */
export function scaleLine(scale: number | undefined): string {
  if (scale === undefined || scale === 1) return '';
  if (scale === 0) return '  model time scaled by 0 (--model-time-scale): the engine takes no model time at all (infinitely fast)\n';
  const how = scale > 1 ? `${+scale.toFixed(3)}× slower` : `${+(1 / scale).toFixed(3)}× faster`;
  return `  model time scaled by ${scale} (--model-time-scale): the engine runs ${how} than the catalog's figures for this GPU\n`;
}
