/** `inferbench plan`'s flags (kept light: the command itself loads only when it runs). */
import type { Command } from 'commander';
import { CAPACITY_DEFAULTS } from '../load/capacity.js';
import { EXAMPLES } from './help-examples.js';
import { addExamples, GROUP, opt } from './help-format.js';
import { lengthFlags, withFlags } from './run-flags.js';
import { KV_CACHE_DTYPE_HELP } from '../config/kv-cache-dtype.js';

export function addPlanCommand(program: Command, io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream }): Command {
  const { load, workload, slo, limits, search, replicas, prices, calibration, verify, outputs } = GROUP;
  const cmd = program
    .command('plan')
    .description('the cheapest deployment (GPU, GPUs per replica, quantization, engine, replicas) that meets an SLO at a required load, searched on the simulator in virtual time');
  withFlags(cmd, [
    opt(load, '--rate <r>', 'the load to serve, requests per second (split evenly over the replicas)'),
    opt(load, '--output-tokens-per-s <t>', 'the load as output tokens per second (rate = T / mean output length)'),
    opt(load, '--arrival <kind>', 'arrivals of the load: constant (evenly spaced) | poisson (random, like independent users)', { value: 'constant' }).choices(['constant', 'poisson']),
    opt(workload, '--model <name>', 'model from the catalog (more with --catalog); a -AWQ/-GPTQ-Int4/-GPTQ-Int8 suffix fixes the quantization'),
    opt(workload, '--catalog <file...>', 'add models/hardware from JSON (catalog format or a Hugging Face config.json)'),
    ...lengthFlags(),
    opt(workload, '--seed <n>', 'seed for lengths and arrivals', { value: '42' }),
    opt(slo, '--slo <spec>', 'per-request limits in ms, e.g. ttft:2000,itl:100 (required)'),
    opt(slo, '--slo-attainment <pct>', 'percent of requests that must meet every limit, failed ones counting as misses', { shown: String(CAPACITY_DEFAULTS.attainment) }),
    opt(slo, '--max-error-share <pct>', 'percent of requests that may fail', { shown: String(CAPACITY_DEFAULTS.maxErrorShare * 100) }),
    opt(slo, '--capacity-precision <pct>', 'capacity search precision, percent', { shown: String(CAPACITY_DEFAULTS.precision * 100) }),
    opt(slo, '--capacity-repeats <n>', 'runs of a load whose attainment is within noise of the target', { shown: String(CAPACITY_DEFAULTS.repeats) }),
    opt(limits, '--max-seconds <time>', 'measure each capacity probe this long after its ramp-up: 5 (seconds), 30s, 1m', { value: '5', shown: '5s' }),
    opt(limits, '--warmup <time>', "also leave out requests sent in a probe's first 2s (or 1, 500ms …)", { shown: '0' }),
    opt(search, '--gpu <list>', 'GPUs to consider, e.g. H100,A100-80GB', { shown: 'every catalog GPU' }),
    opt(search, '--tp <list>', 'GPUs per replica (tensor parallel) to consider', { value: '1,2,4,8' }),
    opt(search, '--quant <list>', 'quantizations to consider', { shown: 'fp16,awq,gptq-int4,gptq-int8' }),
    opt(search, '--engine <list>', 'engines to consider', { shown: 'vllm,sglang,lmdeploy,tgi,triton' }),
    opt(search, KV_CACHE_DTYPE_HELP.flag, `${KV_CACHE_DTYPE_HELP.text}; one type for every candidate (engines without it are skipped)`, { shown: KV_CACHE_DTYPE_HELP.shown }),
    opt(search, '--objective <name>', 'rank feasible deployments by cost ($ per 1M output tokens) or energy (GPU J per output token); both are printed', { value: 'cost' }).choices(['cost', 'energy']),
    opt(replicas, '--router <list>', 'compare routers on the cheapest candidates: each one\'s replicas as one cluster behind round-robin, least-load, prefix-aware (predict --replicas N --router P); none: skip', { shown: 'all three with --prefix-tokens, else none' }),
    opt(replicas, '--router-candidates <n>', 'cheapest feasible candidates whose routers are compared', { shown: '3' }),
    opt(replicas, '--pd <list>', 'try prefill/decode splits P:D on the cheapest candidates whose engine disaggregates (vllm, sglang, triton): the fewest copies of each that meet the SLO (predict --pd P:D); none: skip', { shown: '1:1,1:2,1:3,2:1' }),
    opt(replicas, '--pd-candidates <n>', 'cheapest feasible candidates whose splits are tried', { shown: '3' }),
    opt(search, '--exhaustive', 'search every candidate (no pruning by cost): slower, fills the Pareto chart'),
    opt(search, '--threads <n>', 'threads searching candidates', { shown: 'one per core' }),
    opt(prices, '--gpu-hour-price <list>', 'USD per GPU-hour, e.g. H100=2.49,A100-80GB=1.79', { shown: 'printed, dated assumptions' }),
    opt(prices, '--prices <file>', 'JSON object of GPU name to USD per GPU-hour ({"H100": 2.49})'),
    opt(calibration, '--calibration <file>', 'simulator constants fitted by predict --calibrate-from … --save-calibration FILE'),
    opt(calibration, '--calibrate-from <run>', 'fit the simulator on a measured run folder first, then plan with the fitted constants'),
    opt(calibration, '--save-calibration <file>', 'write the constants --calibrate-from fitted, and with --verify the measured capacity of each deployment (JSON, reusable with --calibration)'),
    opt(verify, '--verify <n>', 'launch the top N candidates one at a time, measure each one\'s capacity under the SLO (run --profile capacity), print predicted beside measured'),
    opt(verify, '--server-cmd <cmd>', 'how --verify starts a candidate: sim (inferbench sim as the candidate), launch (the printed launch command) or a template with {engine} {model} {checkpoint} {gpu} {gpus} {quant} {kvCacheDtype} {name} {port}'),
    opt(verify, '--ready-timeout <time>', 'a launched server must answer (health and a one-token request) within this', { shown: '15m' }),
    opt(verify, '--stop-timeout <time>', 'SIGTERM to the server\'s process group, SIGKILL after this', { shown: '30s' }),
    opt(outputs, '--top <n>', 'feasible candidates shown in the table', { value: '10' }),
    opt(outputs, '--all', 'list every candidate in the table, with the reason it is not feasible'),
    opt(outputs, '--out <dir>', 'write plan.md, plan.json, plan.csv, pareto.svg/png and plan.html here'),
    opt(outputs, '--format <list>', 'files --out writes: md,json,csv,svg,png,html', { value: 'md,json,csv,svg,png,html' }),
    opt(outputs, '--json', 'print the plan as JSON on stdout (candidates in ranked order) and nothing else there'),
  ]);
  return addExamples(cmd, EXAMPLES['plan'] ?? []).action(async (flags: Record<string, unknown>, c: Command) => {
    if (Array.isArray(flags['catalog'])) {
      const { loadCatalogFile } = await import('../sim/catalog/load-file.js');
      for (const file of flags['catalog'] as string[]) loadCatalogFile(file);
    }
    const { planCommand } = await import('./plan-command.js');
    const explicit = (name: string): boolean => c.getOptionValueSource(name) === 'cli';
    process.exitCode = (await planCommand({ ...flags, explicit }, io)).exitCode;
  });
}
