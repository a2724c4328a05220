/**
 * The flags of `run`, `predict` and `sim`, in help groups. A flag the commands share is defined once here, so it
 * reads the same in each; where a flag means something else in one command (run's --gpu records metadata about a
 * real server, predict's picks the modelled GPU) the text says so.
 */
import { type Command, Option } from 'commander';
import { CAPACITY_DEFAULTS } from '../load/capacity.js';
import { SIM_ENGINE_NAMES } from '../sim/engine/profiles.js';
import { KV_CACHE_DTYPE_HELP } from '../config/kv-cache-dtype.js';
import { DEFAULT_SIM } from './defaults.js';
import { addOptions, GROUP, opt } from './help-format.js';

const PROFILES = 'synchronous | concurrent | throughput | constant | poisson | sweep | grid | replay | capacity';
const APIS = 'auto | openai-chat | openai-completions | vllm | tgi | sglang | lmdeploy | llamacpp | triton | ollama | openai-embeddings | tei-embeddings (auto picks a generation API)';

/** The load, workload, limits and SLO flags of `run`, which `predict` shares word for word. */
export function profileFlags(): Option[] {
  const { load, workload, sources, limits, slo, outputs } = GROUP;
  return [
    opt(load, '--profile <name>', PROFILES, { value: 'sweep' }),
    opt(load, '--rate <r,...>', 'constant/poisson: requests per second, one row each; inf = the row sends all its requests at once (--max-requests, else --num-prompts)'),
    opt(load, '--concurrency <n,...>', 'concurrent: streams, one row each'),
    opt(load, '--sweep-rates <n>', 'sweep: rates between its synchronous and throughput rows', { value: '9' }),
    opt(load, '--arrival <kind>', 'arrivals of sweep/capacity rate rows: constant | poisson | gamma', { value: 'constant' }).choices(['constant', 'poisson', 'gamma']),
    opt(load, '--burstiness <k>', 'gamma arrivals: shape (1 = Poisson, lower = burstier)'),
    opt(load, '--max-concurrency <n>', 'client-side cap on requests in flight (queueing is measured)', { shown: 'none' }),
    opt(load, '--input-lens <n,...>', 'grid: prompt lengths'),
    opt(load, '--output-lens <n,...>', 'grid: output lengths'),
    opt(load, '--num-prompts <n>', 'requests sent at once: per grid cell, and by a --rate inf row', { value: '100' }),
    opt(load, '--grid-latency-load <load>', 'grid latency columns: synchronous or rate:R, then optionally ,N requests', { shown: 'synchronous,10' }),

    ...lengthFlags(),
    opt(sources, '--trace <file>', 'replay: a trace, mooncake JSONL or Azure CSV (docs/workloads.md)'),
    opt(sources, '--time-scale <x>', "replay: multiply the trace's gaps (0.5 = twice as fast)", { shown: '1' }),
    opt(workload, '--seed <n>', 'seed for prompts and arrivals', { value: '42' }),

    opt(limits, '--max-requests <n>', 'measure N requests per row (after its ramp-up)'),
    opt(limits, '--max-seconds <time>', 'measure each row this long after its ramp-up: 30 (seconds), 90s, 5m, 1h', { shown: '5s without --max-requests' }),
    opt(limits, '--steady-state', 'also report each row over the stretch where requests in flight held steady (within 20% of their median)'),
    opt(limits, '--repeat <n>', 'run every row N times: the table shows mean ± 95% interval (Student t) of its main figures', { shown: '1' }),
    opt(limits, '--warmup <time>', "also leave out the requests sent in each row's first <time>: 10s, 30 (seconds), 1m", { shown: '0: only the ramp-up is left out' }),

    opt(slo, '--slo <spec>', 'limits in ms for goodput (capacity: per request), e.g. ttft:500,itl:50,e2e:10000'),
    opt(slo, '--slo-attainment <pct>', 'capacity: percent of requests that must meet --slo', { shown: String(CAPACITY_DEFAULTS.attainment) }),
    opt(slo, '--max-error-share <pct>', 'capacity: most failed requests a passing probe may have, percent', { shown: String(CAPACITY_DEFAULTS.maxErrorShare * 100) }),
    opt(slo, '--capacity-axis <axis>', 'capacity: rate (open loop, --arrival) | concurrency (N streams)', { shown: CAPACITY_DEFAULTS.axis }),
    opt(slo, '--capacity-precision <pct>', 'capacity, rate axis: stop when pass and fail are this close, percent', { shown: String(CAPACITY_DEFAULTS.precision * 100) }),
    opt(slo, '--capacity-repeats <n>', 'capacity: most runs of a load whose attainment is within noise', { shown: String(CAPACITY_DEFAULTS.repeats) }),

    opt(outputs, '--json', 'print summary.json to stdout and nothing else there'),
    opt(outputs, '--columns <list>', 'terminal table columns, e.g. default,p90 or rps,ttft,p50,p99 (see docs/reports.md; table.md keeps every seed column)'),
  ];
}

/** Prompt and output lengths: `run`, `predict` and `plan`. */
export function lengthFlags(): Option[] {
  const { workload } = GROUP;
  return [
    opt(workload, '--prompt-tokens <n>', 'prompt length in tokens', { value: '512' }),
    opt(workload, '--output-tokens <n>', 'output length in tokens', { value: '128' }),
    opt(workload, '--prompt-dist <d>', 'prompt lengths: N, uniform:A,B, normal:M,SD, exponential:M'),
    opt(workload, '--output-dist <d>', 'output lengths, same forms as --prompt-dist'),
    opt(workload, '--scenario <s>', 'genai-bench scenario: D(in,out), N(m,sd)/(m,sd), U(a,b)/(c,d)'),
  ];
}

/** `run` only: the server, the workload's sources, request and timeout settings, metadata. */
export function runFlags(): Option[] {
  const { target, workload, sources, limits, outputs, timeouts, metadata } = GROUP;
  return [
    opt(target, '--target <url>', 'server base URL, e.g. http://127.0.0.1:8000', { shown: 'the built-in simulated engine' }),
    opt(target, '--api <name>', APIS, { value: 'auto' }),
    opt(target, '--model <name>', 'model name', { shown: `the server's first /v1/models entry; simulated: ${DEFAULT_SIM.model}` }),
    opt(target, '--api-key <key>', 'bearer token, never written anywhere', { shown: '$OPENAI_API_KEY' }),
    opt(target, '--extra-body <json>', 'JSON object merged into every request body'),
    opt(target, '--no-stream', 'non-streaming requests (no TTFT/ITL)'),
    opt(target, '--reasoning-format <f>', "reasoning models: fields (the engine's reasoning field) | think-tags (inline <think>…</think>)", { value: 'fields' }).choices(['fields', 'think-tags']),
    opt(target, '--batch-size <n>', 'embeddings APIs: inputs (texts) per request', { shown: '1' }),
    opt(target, '--no-force-length', 'do not send ignore_eos/min_tokens; let the server stop early'),

    opt(sources, '--data <file>', 'prompts from JSONL (prompt or messages), ShareGPT JSON or CSV'),
    opt(sources, '--data-column <name>', 'CSV column that holds the prompt', { shown: 'prompt' }),
    opt(workload, '--tokenizer <how>', "prompt lengths counted by a tokenizer.json file, server (its /tokenize) or approx (o200k)", { shown: 'server where it can, else approx' }),
    opt(sources, '--prefix-tokens <n>', 'shared system prefix of N tokens (prefix caching)'),
    opt(sources, '--prefix-groups <k>', 'distinct shared prefixes', { value: '1' }),
    opt(sources, '--turns <d>', 'multi-turn: turns per conversation (N or a distribution)'),
    opt(sources, '--think-time <ms>', 'multi-turn: pause before a turn, ms (or a distribution)', { shown: '0' }),
    opt(sources, '--images <n>', 'multimodal chat: N synthetic noise PNGs (seeded) after the text of every request'),
    opt(sources, '--image-size <WxH>', 'with --images: pixels of each image', { shown: '512x512' }),

    opt(limits, '--drain <time>', "after a row's window, how long its measured requests may take to finish (the load stays on meanwhile)", { value: '30', shown: '30s' }),
    opt(limits, '--stall-timeout <time>', 'stop a row when requests are open and none has finished for this long (at least 10× the synchronous latency once known); the run stops if nothing ever finished', { value: '30', shown: '30s' }),
    opt(limits, '--idle-wait <time>', 'before each row, wait this long at most for an idle server (0 = do not)', { value: '60', shown: '60s' }),

    opt(GROUP.scale, '--workers <n>', "load-generating threads, each with its own connections: N or auto (one unless the load needs more)", { value: '1' }),
    opt(GROUP.scale, '--shard <i/n>', 'run part I of N of this run (0-based; same flags and seed on every shard), then inferbench merge the folders'),
    opt(GROUP.scale, '--barrier <dir>', 'with --shard: a folder every shard can write (shared volume); shards meet there so every row starts together'),
    opt(GROUP.scale, '--start-at <iso>', 'start the first row at this wall-clock instant (ISO-8601, e.g. 2026-11-24T10:00:00Z) so shards start together'),

    opt(outputs, '--out <dir>', 'run folder', { shown: './inferbench-results/<time>-<label>' }),
    opt(outputs, '--format <list>', 'outputs: table,md,json,csv,html,png,svg (html/png/svg: the report and charts, into the run folder)', { value: 'table,md,json,csv' }),
    opt(outputs, '--records <policy>', 'what requests.jsonl keeps: full | no-gaps | sample:FRACTION | none', { value: 'full' }),
    opt(outputs, '--no-progress', 'no live progress lines'),
    opt(outputs, '--resume <dir>', 'continue an interrupted run from its first unfinished row'),
    opt(outputs, '--ui', 'show the run live in the web dashboard (kept up after the run until Ctrl-C)'),

    opt(timeouts, '--timeout-connect <time>', 'to open a connection', { value: '10', shown: '10s' }),
    opt(timeouts, '--timeout-first-byte <time>', 'to the response headers', { value: '600', shown: '10m' }),
    opt(timeouts, '--timeout-idle <time>', 'longest gap between chunks', { value: '120', shown: '2m' }),
    opt(timeouts, '--timeout-request <time>', 'whole request', { value: '1800', shown: '30m' }),

    opt(metadata, '--label <text>', 'free label stored with the run'),
    opt(metadata, '--engine-version <v>', 'engine version', { shown: 'the version the server reports' }),
    opt(metadata, '--gpu <name>', 'GPU (simulated: the GPU modelled)', { shown: `simulated: ${DEFAULT_SIM.gpu}` }),
    opt(metadata, '--gpus <n>', 'GPU count (simulated: tensor-parallel size)', { shown: `simulated: ${DEFAULT_SIM.gpus}` }),
    opt(metadata, '--quant <q>', 'quantization (simulated: awq | gptq-int4 | gptq-int8)', { shown: 'simulated: from the model name' }),

    opt(GROUP.embedded, '--engine <name>', engineText(), { shown: DEFAULT_SIM.engine }),
    kvCacheDtypeFlag(GROUP.embedded),
  ];
}

function kvCacheDtypeFlag(group: string): Option {
  return opt(group, KV_CACHE_DTYPE_HELP.flag, KV_CACHE_DTYPE_HELP.text, { shown: KV_CACHE_DTYPE_HELP.shown });
}

function engineText(): string {
  return `simulated engine: ${SIM_ENGINE_NAMES.join(' | ')}`;
}

/** What the simulated engine models: `sim` and `predict` (same words, same defaults). */
export function simEngineFlags(): Option[] {
  const s = GROUP.simulator;
  return [
    opt(s, '--engine <name>', engineText(), { value: DEFAULT_SIM.engine }),
    opt(s, '--model <name>', 'model from the catalog (more with --catalog)', { value: DEFAULT_SIM.model }),
    opt(s, '--gpu <name>', 'GPU or CPU from the catalog, or cpu:<cores>c:<GB/s>', { value: DEFAULT_SIM.gpu }),
    opt(s, '--gpus <n>', 'tensor-parallel GPUs', { value: String(DEFAULT_SIM.gpus) }),
    opt(s, '--quant <q>', 'fp16 | awq | gptq-int4 | gptq-int8 | fp8 | GGUF Q4_K_M, Q8_0, …', { shown: 'from the model name' }),
    opt(GROUP.simFeatures, '--parallel <n>', "llama.cpp slots (llama-server --parallel); other engines' batch limit", { shown: "the engine's own (llamacpp: 4)" }),
    opt(GROUP.simFeatures, '--ctx-size <n>', "llama.cpp's total context (llama-server -c), split over the slots", { shown: "the model's context, not split" }),
    kvCacheDtypeFlag(s),
    opt(s, '--catalog <file...>', 'add models/hardware from JSON (catalog format or a Hugging Face config.json)'),
  ];
}

/** `predict` only: outputs and calibration. */
export function predictFlags(): Option[] {
  const { outputs, metadata, calibration } = GROUP;
  const list = (v: string, prev: string[] = []): string[] => [...prev, ...v.split(',').filter((r) => r.trim() !== '')];
  return [
    opt(metadata, '--label <text>', 'free label stored with the run'),
    opt(outputs, '--out <dir>', 'also write a run folder with the predicted records'),
    opt(calibration, '--calibrate-from <run>', 'fit the simulator to a measured run (folder or id), print the error before and after, predict that run'),
    opt(calibration, '--calibration <file>', 'use constants saved by --save-calibration'),
    opt(calibration, '--save-calibration <file>', 'write the constants --calibrate-from fitted (JSON)'),
    opt(calibration, '--validate-on <run>', 'error of the prediction on another measured run, before and after calibration (repeatable)').argParser(list),
    opt(calibration, '--seed-file <file>', 'print predicted vs published for every figure of a seed table file'),
    opt(calibration, '--check <file>', 'print predicted vs published for every figure of a table file (data/public-tables JSON, or a seed file)'),
    opt(GROUP.simFeatures, '--spec-decode <k:accept>', 'speculative decoding: K drafts per step at this acceptance rate (e.g. 4:0.7)'),
  ];
}

/** `sim` only: the server and its faults. */
export function simFlags(): Option[] {
  const { simulator, server, faults } = GROUP;
  return [
    opt(simulator, '--max-num-seqs <n>', "the engine's batch limit", { shown: "the engine's own" }),
    opt(simulator, '--model-time-scale <x>', 'multiply all model time (1.3 = 30% slower; 0 = infinitely fast); also --time-scale', { shown: '1' }),
    // Its old name, kept working: `inferbench sim --time-scale 1.3` is in scripts and docs.
    new Option('--time-scale <x>').hideHelp(),
    opt(GROUP.simFeatures, '--reasoning-tokens <dist>', "reasoning tokens before each answer, in the engine's reasoning field (512, uniform:100,800, …)"),
    opt(GROUP.simFeatures, '--spec-decode <k:accept>', 'speculative decoding: K drafts per step at this acceptance rate (e.g. 4:0.7)'),
    opt(GROUP.simFeatures, '--no-prefix-caching', 'turn off the prefix cache (on in vllm and sglang, as in the real engines)'),
    opt(GROUP.simFeatures, '--enable-prompt-tokens-details', 'usage reports prompt_tokens_details.cached_tokens (OpenAI routes)'),
    opt(server, '--host <addr>', 'loopback address to bind', { value: '127.0.0.1' }),
    opt(server, '--port <n>', 'port (0 = any free port)', { value: '8000' }),
    opt(faults, '--faults <spec>', 'inject faults, e.g. 429:0.05,reset:0.02 (kinds: 429, 500, 503, reset, stall, malformed, truncate, slow-first-byte; docs/simulator.md)'),
    opt(faults, '--seed <n>', 'seed for faults, natural lengths and noise', { value: '1' }),
  ];
}

const GROUP_ORDER: readonly string[] = Object.values(GROUP);

/** Adds lists of options to a command, grouped in GROUP's order (help prints groups in order of first use). */
export function withFlags(cmd: Command, ...lists: Option[][]): Command {
  const rank = (o: Option): number => {
    const i = GROUP_ORDER.indexOf(o.helpGroupHeading ?? '');
    return i < 0 ? GROUP_ORDER.length : i;
  };
  // Array.prototype.sort is stable: options keep their order inside a group.
  return addOptions(cmd, lists.flat().sort((a, b) => rank(a) - rank(b)));
}
