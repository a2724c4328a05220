/** `inferbench plan`'s flags (kept light: the command itself loads only when it runs). */
import { type Command, Option } from 'commander';
import { CAPACITY_DEFAULTS } from '../load/capacity.js';

export function addPlanCommand(program: Command, io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream }): Command {
  return program
    .command('plan')
    .description('the cheapest deployment (GPU, GPUs per replica, quantization, engine, replicas) that meets an SLO at a required load, searched on the simulator in virtual time')
    .option('--model <name>', 'model from the catalog (or --catalog FILE); a -AWQ/-GPTQ-Int4/-GPTQ-Int8 suffix fixes the quantization')
    .option('--catalog <file...>', 'add models/hardware from JSON (catalog format or a Hugging Face config.json)')
    .option('--rate <r>', 'the load to serve, requests per second (split evenly over the replicas)')
    .option('--output-tokens-per-s <t>', 'the load to serve as output tokens per second (rate = T / mean output length)')
    .option('--prompt-tokens <n>', 'prompt length in tokens', '512')
    .option('--output-tokens <n>', 'output length in tokens', '128')
    .option('--prompt-dist <d>', 'prompt lengths: N, uniform:A,B, normal:MEAN,SD or exponential:MEAN')
    .option('--output-dist <d>', 'output lengths, same forms as --prompt-dist')
    .option('--scenario <s>', 'genai-bench scenario: D(in,out), N(mean,sd)/(mean,sd) or U(a,b)/(c,d)')
    .option('--slo <spec>', 'per-request limits in ms, e.g. ttft:2000,itl:100 (required)')
    .option('--slo-attainment <p>', `percent of requests that must meet every limit, failed ones counting as misses (default ${CAPACITY_DEFAULTS.attainment})`)
    .option('--max-error-share <p>', `percent of requests that may fail (default ${CAPACITY_DEFAULTS.maxErrorShare * 100})`)
    .option('--capacity-precision <p>', `capacity search precision, percent (default ${CAPACITY_DEFAULTS.precision * 100})`)
    .option('--capacity-repeats <n>', `runs of a load whose attainment is within noise of the target (default ${CAPACITY_DEFAULTS.repeats})`)
    .addOption(new Option('--arrival <kind>', 'arrivals of the load, as run/predict --arrival (constant: evenly spaced; poisson: random, like independent users)').choices(['constant', 'poisson']).default('constant'))
    .option('--max-seconds <s>', 'measure each capacity probe S seconds after its ramp-up', '5')
    .option('--warmup <s>', 'exclude requests sent in the first S seconds of each probe')
    .option('--gpu <list>', 'GPUs to consider (default: every catalog GPU), e.g. H100,A100-80GB')
    .option('--tp <list>', 'GPUs per replica (tensor parallel) to consider', '1,2,4,8')
    .option('--quant <list>', 'quantizations to consider (default: fp16,awq,gptq-int4,gptq-int8)')
    .option('--engine <list>', 'engines to consider (default: vllm,sglang,lmdeploy,tgi,triton)')
    .option('--gpu-hour-price <list>', 'USD per GPU-hour, e.g. H100=2.49,A100-80GB=1.79 (others: printed assumptions)')
    .option('--prices <file>', 'JSON object of GPU name to USD per GPU-hour ({"H100": 2.49})')
    .option('--calibration <file>', 'simulator constants fitted by predict --calibrate-from … --save-calibration FILE')
    .option('--calibrate-from <run>', 'fit the simulator on a measured run folder first, then plan with the fitted constants')
    .option('--save-calibration <file>', 'write the constants --calibrate-from fitted (JSON, reusable with --calibration)')
    .option('--exhaustive', 'search every candidate (no pruning by cost): slower, fills the Pareto chart')
    .option('--threads <n>', 'threads searching candidates (default: one per core)')
    .option('--top <n>', 'feasible candidates shown in the table', '10')
    .option('--all', 'list every candidate in the table, with the reason it is not feasible')
    .option('--out <dir>', 'write plan.md, plan.json, plan.csv, pareto.svg/png and plan.html here')
    .option('--format <list>', 'files --out writes: md,json,csv,svg,png,html', 'md,json,csv,svg,png,html')
    .option('--seed <n>', 'seed for lengths and arrivals', '42')
    .option('--json', 'print the plan as JSON on stdout (candidates in ranked order) and nothing else there')
    .action(async (flags: Record<string, unknown>, cmd: Command) => {
      if (Array.isArray(flags['catalog'])) {
        const { loadCatalogFile } = await import('../sim/catalog/load-file.js');
        for (const file of flags['catalog'] as string[]) loadCatalogFile(file);
      }
      const { planCommand } = await import('./plan-command.js');
      const explicit = (name: string): boolean => cmd.getOptionValueSource(name) === 'cli';
      process.exitCode = (await planCommand({ ...flags, explicit }, io)).exitCode;
    });
}
