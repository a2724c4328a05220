/**
 * One resolver per options section: each reads its flags through the table's rows (FlagReader) and returns the
 * section's values, problems pushed on the reader; none changes its input. Checks across sections are in
 * run-options.ts, which composes these.
 */
import type { Timeouts } from '../transport/exchange.js';
import { FlagReader } from './flags/table.js';
import { DEFAULT_DRAIN_SECONDS, DEFAULT_IDLE_WAIT_SECONDS, DEFAULT_STALL_SECONDS } from './flags/window.js';
import { stripV1Suffix } from './flag-conflicts.js';
import { defined, type DistributionSection, type LoadSection, type OutputSection, type TargetSection, type WindowSection, type WorkloadSection } from './options.js';
import { parseGridLatencyLoad } from './parse.js';

export function resolveTargetSection(f: FlagReader, env: NodeJS.ProcessEnv, notices: string[]): TargetSection {
  const p = f.problems;
  const raw = f.text('target');
  let target: string | undefined;
  const urls: string[] = [];
  // Several replicas: URL,URL,… (a repeated --target arrives joined the same way).
  for (const one of raw === undefined ? [] : raw.split(',').map((x) => x.trim()).filter((x) => x !== '')) {
    try {
      const u = new URL(one);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
      urls.push(stripV1Suffix(u, notices));
    } catch {
      p.push(`--target ${JSON.stringify(one)} is not an http(s) URL; write it like --target http://127.0.0.1:8000 (several: URL,URL)`);
    }
  }
  if (raw !== undefined && urls.length === 0 && p.length === 0) p.push('--target is empty; write it like --target http://127.0.0.1:8000');
  target = urls[0];
  if (new Set(urls).size < urls.length) p.push(`--target lists a URL twice (${urls.join(', ')}); list each replica once`);
  const targets = urls.length > 1 ? urls : undefined;
  const balance = f.given('balance');
  if (balance !== undefined && targets === undefined) p.push('--balance spreads requests over several replicas; give them as --target URL,URL,…');
  const api = f.orDefault('api') ?? 'auto';
  const ms = (s: number | undefined): number | undefined => (s === undefined ? undefined : s * 1000);
  const timeouts: Partial<Timeouts> = defined({
    connectMs: ms(f.given('timeoutConnect')),
    firstByteMs: ms(f.given('timeoutFirstByte')),
    idleMs: ms(f.given('timeoutIdle')),
    totalMs: ms(f.given('timeoutRequest')),
  });
  const kvCacheDtype = f.given('kvCacheDtype');
  if (target !== undefined && f.has('kvCacheDtype')) {
    p.push("--kv-cache-dtype sets the built-in simulator's KV cache, but --target measures your server as it is; drop it (predict --calibrate-from RUN --kv-cache-dtype T models a server that uses it)");
  }
  const reasoningFormat = f.given('reasoningFormat');
  return defined({
    target,
    targets,
    balance: targets ? (balance ?? 'round-robin') : undefined,
    sessionHeader: f.given('sessionHeader'),
    replicaHeader: f.given('replicaHeader'),
    api,
    model: f.given('model'),
    apiKey: f.given('apiKey') ?? (env['OPENAI_API_KEY'] || undefined),
    extraBody: f.given('extraBody'),
    stream: f.switch('stream') !== false,
    forceLength: f.switch('forceLength') !== false,
    reasoningFormat: reasoningFormat === 'think-tags' ? reasoningFormat : undefined,
    timeouts,
    gpu: f.given('gpu'),
    gpus: f.given('gpus'),
    engine: f.given('engine'),
    engineVersion: f.given('engineVersion'),
    quant: f.given('quant'),
    kvCacheDtype,
    power: f.given('power'),
    powerGpus: f.given('powerGpus'),
  });
}

export function resolveWorkloadSection(f: FlagReader): WorkloadSection {
  const p = f.problems;
  const workload = defined({
    outputTokensGiven: f.has('outputTokens') && f.explicit('outputTokens'),
    tokenizer: f.given('tokenizer'),
    promptDist: f.given('promptDist'),
    outputDist: f.given('outputDist'),
    scenario: f.given('scenario'),
    data: f.given('data'),
    dataColumn: f.given('dataColumn'),
    prefixTokens: f.given('prefixTokens'),
    prefixGroups: f.given('prefixGroups'),
    turns: f.given('turns'),
    thinkTime: f.given('thinkTime'),
    trace: f.given('trace'),
    timeScale: f.given('timeScale'),
  });
  const sources = [workload.data && '--data', workload.trace && '--trace', workload.turns && '--turns', workload.scenario && '--scenario'].filter(Boolean);
  if (sources.length > 1) p.push(`${sources.join(' and ')} each describe the whole workload; give one of them`);
  if (workload.scenario && (workload.promptDist || workload.outputDist)) p.push('--scenario sets both lengths; drop --prompt-dist/--output-dist');
  f.checkNeeds('workload');
  return {
    promptTokens: f.orDefault('promptTokens') ?? 512,
    outputTokens: f.orDefault('outputTokens') ?? 128,
    seed: f.orDefault('seed') ?? 42,
    workload,
  };
}

export function resolveLoadSection(f: FlagReader): LoadSection {
  return defined({
    profile: f.orDefault('profile') ?? 'sweep',
    rates: f.given('rate'),
    concurrencies: f.given('concurrency'),
    sweepRates: f.orDefault('sweepRates') ?? 9,
    arrival: f.orDefault('arrival') ?? 'constant',
    burstiness: f.given('burstiness'),
    maxConcurrency: f.given('maxConcurrency'),
    inputLens: f.given('inputLens'),
    outputLens: f.given('outputLens'),
    numPrompts: f.orDefault('numPrompts') ?? 100,
    numPromptsGiven: f.raw.numPromptsExplicit === true,
    gridLatencyLoad: f.given('gridLatencyLoad') ?? parseGridLatencyLoad(undefined, f.problems),
    slo: f.given('slo'),
  });
}

/** `--repeat` is checked against the profile and shards by the composition (run-options.ts). */
export function resolveWindowSection(f: FlagReader): WindowSection {
  return defined({
    maxRequests: f.given('maxRequests'),
    maxSeconds: f.given('maxSeconds'),
    warmupSeconds: f.given('warmup'),
    steadyState: f.switch('steadyState') === true ? true : undefined,
    drainSeconds: f.orDefault('drain') ?? DEFAULT_DRAIN_SECONDS,
    stallSeconds: f.orDefault('stallTimeout') ?? DEFAULT_STALL_SECONDS,
    idleWaitSeconds: f.orDefault('idleWait') ?? DEFAULT_IDLE_WAIT_SECONDS,
  });
}

export function resolveOutputSection(f: FlagReader): OutputSection {
  return defined({
    formats: f.orDefault('format') ?? [],
    json: f.switch('json') === true,
    columns: f.given('columns'),
    out: f.given('out'),
    records: f.orDefault('records') ?? { kind: 'full' },
    progress: f.switch('progress') !== false,
    resume: f.given('resume'),
    label: f.given('label'),
  });
}

export function resolveDistributionSection(f: FlagReader): DistributionSection {
  const section = defined({
    workers: f.orDefault('workers') ?? 1,
    shard: f.given('shard'),
    barrier: f.given('barrier'),
    startAt: f.given('startAt'),
  });
  f.checkNeeds('distribution');
  if (section.barrier !== undefined && section.shard === undefined) delete section.barrier;
  return section;
}
