import { Command, CommanderError, Option } from 'commander';
import { isUserError, InferbenchError } from '../core/errors.js';
import { SIM_ENGINE_NAMES } from '../sim/engine/profiles.js';
import { DEFAULT_SIM } from './defaults.js';
import { addPlanCommand } from './plan-flags.js';
import { toolVersion } from './version.js';

const io = { stdout: process.stdout, stderr: process.stderr };

/** Every flag of `run` that `predict` shares (profile and workload). */
function addProfileFlags(cmd: Command): Command {
  return cmd
    .option('--profile <name>', 'synchronous | concurrent | throughput | constant | poisson | sweep | grid | replay | capacity', 'sweep')
    .option('--rate <r,...>', 'requests per second for constant/poisson (comma list = one row each)')
    .option('--concurrency <n,...>', 'streams for the concurrent profile (comma list = one row each)')
    .option('--prompt-tokens <n>', 'prompt length in tokens', '512')
    .option('--output-tokens <n>', 'output length in tokens', '128')
    .option('--prompt-dist <d>', 'prompt lengths: N, uniform:A,B, normal:MEAN,SD or exponential:MEAN')
    .option('--output-dist <d>', 'output lengths, same forms as --prompt-dist')
    .option('--scenario <s>', 'genai-bench scenario: D(in,out), N(mean,sd)/(mean,sd) or U(a,b)/(c,d)')
    .option('--trace <file>', 'replay: JSONL (timestamp, input_length, output_length) or Azure CSV (TIMESTAMP, ContextTokens, GeneratedTokens)')
    .option('--time-scale <x>', 'replay: multiply the trace\'s gaps (0.5 = twice as fast)')
    .option('--max-requests <n>', 'measure N requests per row (after the ramp-up)')
    .option('--max-seconds <s>', 'measure S seconds per row after the ramp-up (default 5 when no other limit)')
    .option('--warmup <s>', 'exclude requests sent in the first S seconds of each row')
    .option('--input-lens <n,...>', 'grid: prompt lengths')
    .option('--output-lens <n,...>', 'grid: output lengths')
    .option('--num-prompts <n>', 'grid: requests per cell, all sent at once', '100')
    .option('--grid-latency-load <load>', 'grid: how the latency columns are measured: synchronous (default) or rate:R, optionally ,N requests (default 10)')
    .option('--sweep-rates <n>', 'sweep: async rates between synchronous and throughput', '9')
    .addOption(new Option('--arrival <kind>', 'arrivals for sweep rows').choices(['constant', 'poisson', 'gamma']).default('constant'))
    .option('--burstiness <k>', 'gamma arrivals: shape (1 = Poisson, lower = burstier)')
    .option('--max-concurrency <n>', 'client-side cap on requests in flight (queueing is measured)')
    .option('--slo <spec>', 'goodput SLOs in ms, e.g. ttft:500,itl:50,e2e:10000 (capacity: the limits each request must meet)')
    .option('--slo-attainment <pct>', 'capacity: percent of requests that must meet --slo (99 = p99 within the limits; default 99)')
    .option('--max-error-share <pct>', 'capacity: most failed requests a passing probe may have, percent (default 1)')
    .option('--capacity-axis <axis>', 'capacity: rate (open loop, --arrival) or concurrency (N streams); default rate')
    .option('--capacity-precision <pct>', 'capacity, rate axis: stop when pass and failure are within this percent (default 5)')
    .option('--capacity-repeats <n>', 'capacity: most runs of one load when its attainment is within noise of the target (default 2)')
    .option('--seed <n>', 'seed for prompts and arrivals', '42')
    .option('--json', 'print summary.json to stdout and nothing else there');
}

/** What the simulated engine models: shared by `sim` and `predict`. */
function addSimEngineFlags(cmd: Command, engines: string): Command {
  return cmd
    .option('--engine <name>', engines, DEFAULT_SIM.engine)
    .option('--model <name>', 'model from the catalog (or --catalog FILE)', DEFAULT_SIM.model)
    .option('--gpu <name>', 'GPU from the catalog', DEFAULT_SIM.gpu)
    .option('--gpus <n>', 'tensor-parallel GPUs', String(DEFAULT_SIM.gpus))
    .option('--quant <q>', 'fp16 | awq | gptq-int4 | gptq-int8 (default: from the model name)')
    .option('--catalog <file...>', 'add models/hardware from JSON (catalog format or a Hugging Face config.json)');
}

export function buildProgram(): Command {
  const program = new Command('inferbench')
    .description('Benchmark LLM inference servers — or the built-in simulated engine.')
    .version(toolVersion())
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  addProfileFlags(
    program
      .command('run')
      .description('measure a server (default: the built-in simulated engine) and print the seed tables')
      .option('--target <url>', 'server base URL, e.g. http://127.0.0.1:8000 (default: start the simulator in-process)')
      .option('--api <name>', 'auto | openai-chat | openai-completions | vllm | tgi | sglang | lmdeploy | llamacpp | triton | ollama', 'auto')
      .option('--model <name>', 'model name (default: the first of /v1/models; the simulator: Qwen2-7B-Instruct)'),
  )
    .option('--engine <name>', 'simulator engine when there is no --target (vllm, tgi, sglang, …)')
    .option('--gpu <name>', 'GPU (run metadata; the simulator: which GPU to model)')
    .option('--gpus <n>', 'GPU count (metadata; the simulator: tensor-parallel size)')
    .option('--quant <q>', 'quantization (metadata; the simulator: awq | gptq-int4 | gptq-int8)')
    .option('--engine-version <v>', 'engine version (metadata)')
    .option('--label <text>', 'free label stored with the run')
    .option('--out <dir>', 'run folder (default ./inferbench-results/<time>-<label>)')
    .option('--format <list>', 'outputs: table,md,json,csv', 'table,md,json,csv')
    .option('--api-key <key>', 'bearer token (default: $OPENAI_API_KEY); never written anywhere')
    .option('--extra-body <json>', 'JSON object merged into every request body')
    .option('--no-stream', 'non-streaming requests (no TTFT/ITL)')
    .option('--no-force-length', 'do not send ignore_eos/min_tokens; let the server stop early')
    .option('--timeout-connect <s>', 'connect timeout, seconds', '10')
    .option('--timeout-first-byte <s>', 'time to response headers, seconds', '600')
    .option('--timeout-idle <s>', 'longest gap between chunks, seconds', '120')
    .option('--timeout-request <s>', 'whole request, seconds', '1800')
    .option('--drain <s>', 'after --max-seconds, how long requests in flight may finish', '30')
    .option('--idle-wait <s>', 'before each row, wait up to S seconds for the server to be idle (0 = do not wait)', '60')
    .option('--no-progress', 'no live progress lines')
    .option('--tokenizer <file|server|approx>', 'prompt lengths: a Hugging Face tokenizer.json, "server" (its /tokenize; the default where the server has one) or "approx" (o200k_base, offline)')
    .option('--data <file>', 'prompts from JSONL (prompt or messages), ShareGPT JSON or CSV')
    .option('--data-column <name>', 'CSV column that holds the prompt')
    .option('--prefix-tokens <n>', 'shared system prefix of N tokens (prefix caching)')
    .option('--prefix-groups <k>', 'number of distinct shared prefixes', '1')
    .option('--turns <d>', 'multi-turn conversations: turns per conversation (N or a distribution)')
    .option('--think-time <ms>', 'multi-turn: pause between a reply and the next turn (ms, or a distribution)')
    .option('--records <policy>', 'what requests.jsonl keeps: full | no-gaps | sample:FRACTION | none (summaries use every request)', 'full')
    .option('--resume <dir>', 'continue an interrupted run from its first unfinished row (same config and seed)')
    .option('--ui', 'show the run live in the web dashboard (the one serving the results folder, else one started for it, kept up after the run until Ctrl-C)')
    .action(async (flags: Record<string, unknown>, cmd: Command) => {
      const { resolveRunOptions } = await import('../config/run-options.js');
      const { runCommand } = await import('./run-command.js');
      const notices: string[] = [];
      const { ui, ...runFlags } = flags;
      const opts = resolveRunOptions(withSources(runFlags, cmd), process.env, undefined, notices);
      printNotices(notices, opts.json);
      const outcome = await runCommand(opts, io, { ui: ui === true });
      process.exitCode = outcome.exitCode;
      await outcome.dashboard?.hold(io.stderr);
    });

  addSimEngineFlags(program.command('sim'), SIM_ENGINE_NAMES.join(' | '))
    .description('serve the simulated engine on 127.0.0.1, speaking one engine\'s API')
    .option('--host <addr>', 'loopback address to bind', '127.0.0.1')
    .option('--port <n>', 'port (0 = any free port)', '8000')
    .option('--faults <spec>', 'inject faults, e.g. 429:0.05,500:0.01,reset:0.02,stall:0.01,malformed:0.01,truncate:0.01,slow-first-byte:0.02')
    .option('--seed <n>', 'seed for faults, natural lengths and noise', '1')
    .option('--time-scale <x>', 'multiply all model time (0 = infinitely fast engine)')
    .option('--max-num-seqs <n>', 'override the engine\'s batch limit')
    .action(async (flags: Record<string, unknown>) => {
      const { simCommand } = await import('./sim-command.js');
      process.exitCode = await simCommand(flags as unknown as import('./sim-command.js').SimFlags, io);
    });

  addSimEngineFlags(
    addProfileFlags(
      program
        .command('predict')
        .description('answer the same profiles from the simulated engine in virtual time (well under a second)'),
    ),
    SIM_ENGINE_NAMES.join(' | '),
  )
    .option('--label <text>', 'free label stored with the prediction')
    .option('--out <dir>', 'also write a run folder with the predicted records')
    .option('--seed-file <file>', 'print predicted vs published for every figure of a seed table file')
    .option('--calibrate-from <run>', 'fit the hardware and engine constants to a measured run folder (or run id) first, print the error before and after, and predict that run\'s configuration with them')
    .option('--calibration <file>', 'use constants saved by --save-calibration')
    .option('--save-calibration <file>', 'write the constants --calibrate-from fitted (JSON)')
    .option('--validate-on <run>', 'print the error of the prediction on another measured run, before and after calibration (repeatable, or a comma list)', (v: string, prev: string[] = []) => [...prev, ...v.split(',').filter((r) => r.trim() !== '')])
    .action(async (flags: Record<string, unknown>, cmd: Command) => {
      if (Array.isArray(flags['catalog'])) {
        const { loadCatalogFile } = await import('../sim/catalog/load-file.js');
        for (const file of flags['catalog'] as string[]) loadCatalogFile(file);
      }
      if (typeof flags['seedFile'] === 'string') {
        const { seedCompareCommand } = await import('./seed-compare-command.js');
        process.exitCode = seedCompareCommand(flags['seedFile'], flags['json'] === true, io.stdout);
        return;
      }
      const { resolveRunOptions } = await import('../config/run-options.js');
      const { predictCommand } = await import('./predict-command.js');
      const notices: string[] = [];
      const opts = resolveRunOptions(withSources(flags, cmd), process.env, undefined, notices);
      printNotices(notices, opts.json);
      const { readCalibrationFlags } = await import('./calibration-flags.js');
      process.exitCode = (await predictCommand(opts, io, readCalibrationFlags(flags, cmd))).exitCode;
    });

  addPlanCommand(program, io);

  program
    .command('ls')
    .description('list saved runs (id, date, model, engine, GPU) under the results directory')
    .option('--results <dir>', 'results directory', 'inferbench-results')
    .option('--model <text>', 'only runs whose model contains TEXT')
    .option('--engine <text>', 'only runs whose engine contains TEXT')
    .option('--gpu <text>', 'only runs whose GPU contains TEXT')
    .option('--label <text>', 'only runs whose label contains TEXT')
    .option('--since <date>', 'only runs created on or after DATE (YYYY-MM-DD or ISO time)')
    .option('--json', 'print the list as JSON')
    .action(async (flags: Record<string, unknown>) => {
      const { lsCommand } = await import('./ls-command.js');
      process.exitCode = lsCommand(flags, io);
    });

  program
    .command('ui')
    .description('local web dashboard on 127.0.0.1: runs, one run, compare, and runs in progress, live')
    .option('--port <n>', 'port (0 = any free port; default 8377, or a free one when that is taken)')
    .option('--results <dir>', 'results directory', 'inferbench-results')
    .action(async (flags: Record<string, unknown>) => {
      const { uiCommand } = await import('./ui-command.js');
      process.exitCode = await uiCommand(flags, io);
    });

  program
    .command('import')
    .description("turn other tools' result files (GuideLLM, vLLM bench serve, SGLang bench_serving, AIPerf, genai-bench) into inferbench runs")
    .argument('<file...>', 'result files or folders; the tool is told from the content, not the name')
    .option('--label <text>', 'label stored with each imported run (default: the tool and its version)')
    .option('--out <dir>', 'run folder for the imported run (one file only)')
    .option('--results <dir>', 'results directory the run folders go under', 'inferbench-results')
    .action(async (files: string[], flags: Record<string, unknown>) => {
      const { importCommand } = await import('./import-command.js');
      process.exitCode = importCommand(files, flags, io);
    });

  program
    .command('report')
    .description('re-render saved runs (tables, charts, HTML) without re-running them')
    .argument('<run...>', 'run ids (see `inferbench ls`) or run folders')
    .option('--results <dir>', 'results directory to look run ids up in', 'inferbench-results')
    .option('--format <list>', 'md,csv,json,html,png,svg,llmd (llmd: the llm-d benchmark report v0.2, one JSON file per row)', 'md,csv,json,html,png')
    .option('--out <dir>', 'folder for the files (default ./inferbench-reports/<time>-report)')
    .action(async (refs: string[], flags: Record<string, unknown>) => {
      const { reportCommand } = await import('./report-command.js');
      process.exitCode = await reportCommand(refs, flags, io);
    });

  program
    .command('compare')
    .description('side-by-side seed tables of saved runs, deltas vs the first run, and a verdict at matched load')
    .argument('<run...>', 'two or more run ids (see `inferbench ls`) or run folders; the first is the baseline')
    .option('--results <dir>', 'results directory to look run ids up in', 'inferbench-results')
    .option('--slo <spec>', 'SLO in ms at p99, e.g. ttft:500,itl:50,e2e:10000')
    .option(
      '--gpu-hour-price <usd|list>',
      "price of one GPU-hour, for the cost per 1M output tokens (read at the highest load meeting --slo when given) and capacity runs' requests per $: one USD for every run, or per GPU (H100=2.49,A100-80GB=1.79) looked up by each run's GPU",
    )
    .option('--prices <file>', 'JSON object of GPU name to USD per GPU-hour ({"H100": 2.49}); --gpu-hour-price GPU=USD pairs win over it')
    .option('--allow-mismatch', 'compare runs of different models, lengths/datasets, profiles or window rules anyway (refused otherwise; a WARNING is printed)')
    .option('--format <list>', 'md,csv,json,html,png,svg', 'md,csv,json,html,png')
    .option('--out <dir>', 'folder for the files (default ./inferbench-reports/<time>-compare)')
    .action(async (refs: string[], flags: Record<string, unknown>) => {
      const { compareCommand } = await import('./compare-command.js');
      process.exitCode = await compareCommand(refs, flags, io);
    });

  return program;
}

/** Marks which defaulted flags the user actually typed (their meaning can depend on it). */
function withSources(flags: Record<string, unknown>, cmd: Command): Record<string, unknown> {
  return {
    ...flags,
    outputTokensExplicit: cmd.getOptionValueSource('outputTokens') === 'cli',
    numPromptsExplicit: cmd.getOptionValueSource('numPrompts') === 'cli',
    profileExplicit: cmd.getOptionValueSource('profile') === 'cli',
    arrivalExplicit: cmd.getOptionValueSource('arrival') === 'cli',
    sweepRatesExplicit: cmd.getOptionValueSource('sweepRates') === 'cli',
    ...(cmd.getOptionValueSource('prefixGroups') === 'cli' ? {} : { prefixGroups: undefined }),
  };
}

/** Settings implied from the flags, one `note:` line each, where the command's human output goes. */
function printNotices(notices: readonly string[], json: boolean): void {
  for (const n of notices) (json ? io.stderr : io.stdout).write(`note: ${n}\n`);
}

/** Entry point: maps user mistakes to one line and exit 2, other failures to exit 1. */
export async function main(argv: string[]): Promise<void> {
  // `inferbench … | head` closes the pipe early: stop quietly, as Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
      throw err;
    });
  }
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    // commander already printed its message (and help where asked for)
    return err.exitCode === 0 ? 0 : 2;
  }
  if (isUserError(err)) {
    process.stderr.write(`error: ${err.message}${err.hint ? ` (${err.hint})` : ''}\n`);
    return 2;
  }
  if (err instanceof InferbenchError) {
    process.stderr.write(`error: ${err.message}${err.hint ? ` (${err.hint})` : ''}\n`);
    return err.code === 'E_CONNECT' ? 2 : 1;
  }
  const e = err as Error;
  process.stderr.write(`internal error: ${e?.stack ?? String(err)}\n`);
  return 1;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (invokedDirectly) void main(process.argv.slice(2));
