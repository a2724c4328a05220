import type { RunOptions } from '../config/run-options.js';
import { configError, isUserError } from '../core/errors.js';
import type { ApiName } from '../dialects/types.js';
import { isEmbeddingsApi } from '../dialects/index.js';
import { createWorkload, type WorkloadSpec } from '../workload/create.js';
import { DEFAULT_EMBEDDING_BATCH, embeddingWorkload } from '../workload/embedding-workload.js';
import { loadHfTokenizer } from '../workload/hf-tokenizer.js';
import { withImages } from '../workload/images.js';
import { imageApiProblem } from '../config/image-options.js';
import { parseLengthDist, parseScenario, type LengthDist } from '../workload/lengths.js';
import { createServerTokenizer, type TokenizeApi } from '../workload/server-tokenizer.js';
import { APPROX_TOKENIZER_WARNING, loadApproxTokenizer, type Tokenizer } from '../workload/tokenizer.js';
import { loadTrace } from '../workload/trace.js';
import { createLengthsWorkload } from '../workload/synthetic.js';
import type { Workload } from '../workload/types.js';

/** Per /tokenize request when the server tokenizer is the default rather than asked for. */
const DEFAULT_TOKENIZE_TIMEOUT_MS = 5000;

/** Engines whose /tokenize the server tokenizer can use. */
const TOKENIZE_API: Record<string, TokenizeApi> = { vllm: 'vllm', sglang: 'sglang', tgi: 'tgi', llamacpp: 'llamacpp' };

export interface WorkloadSetup {
  tokenizer: Tokenizer;
  /** A line to print when counts are only approximate. */
  warning?: string;
  /** A line saying how prompt lengths were made exact (the server's /tokenize by default). */
  notice?: string;
  workload: Workload;
  /** Grid cells, built before the run so a bad setting fails before any request. */
  workloadFor: (promptTokens: number, outputTokens: number) => Workload;
}

/** The prompt and output length distributions the flags ask for. */
export function lengthDists(opts: RunOptions): { prompt: LengthDist; output: LengthDist } {
  const w = opts.workload;
  if (w.scenario) return parseScenario(w.scenario);
  return {
    prompt: w.promptDist ? parseLengthDist(w.promptDist, '--prompt-dist') : { kind: 'fixed', value: opts.promptTokens },
    output: w.outputDist ? parseLengthDist(w.outputDist, '--output-dist') : { kind: 'fixed', value: opts.outputTokens },
  };
}

type Target = { baseUrl: string; engine: string; model: string; api: ApiName };

/**
 * Without --tokenizer, a server with a /tokenize endpoint (the built-in simulator, vLLM, SGLang, TGI, llama.cpp)
 * counts prompts itself: a few calibration requests before the first row make every synthetic prompt exactly its
 * length in the server's tokenizer; prompts are then built locally, so nothing of this runs while requests are
 * sent. Datasets keep the approximate default (their texts are fixed: the server would have to count each one).
 * Where /tokenize is missing or unusable the run falls back to the approximate tokenizer and says why.
 */
export async function setupWorkload(opts: RunOptions, target: Target, signal?: AbortSignal): Promise<WorkloadSetup> {
  const stop = signal ? { signal } : {};
  const t = opts.workload.tokenizer;
  const tokenizeApi = TOKENIZE_API[target.engine.replace(/-legacy$/, '')];
  if (t === 'server') {
    if (!tokenizeApi) throw configError(`--tokenizer server: ${target.engine} has no /tokenize endpoint`, 'pass --tokenizer PATH/tokenizer.json');
    return buildWorkload(opts, target, await createServerTokenizer(target.baseUrl, tokenizeApi, opts.apiKey, { model: target.model, ...stop }));
  }
  if (t !== undefined && t !== 'approx') return buildWorkload(opts, target, await loadHfTokenizer(t));
  const approx = async (why = ''): Promise<WorkloadSetup> => ({ ...(await buildWorkload(opts, target, await loadApproxTokenizer())), warning: APPROX_TOKENIZER_WARNING + why });
  if (t === 'approx' || !tokenizeApi || opts.workload.data !== undefined) return approx();

  const started = performance.now();
  try {
    // Not asked for: a server that does not answer /tokenize promptly costs seconds, not the 30 s default.
    const tokenizer = await createServerTokenizer(target.baseUrl, tokenizeApi, opts.apiKey, { model: target.model, timeoutMs: DEFAULT_TOKENIZE_TIMEOUT_MS, ...stop });
    const setup = await buildWorkload(opts, target, tokenizer);
    const ms = performance.now() - started;
    setup.notice = `prompt lengths: exact, calibrated against the server's /tokenize before the first row (${tokenizer.requests} requests, ${ms.toFixed(0)} ms); --tokenizer approx skips this`;
    return setup;
  } catch (err) {
    // Only the server tokenizer's own failures fall back; a bad --prefix-tokens or file fails as before.
    if (!isUserError(err) || !err.message.startsWith('--tokenizer server:')) throw err;
    return approx(` (the server's /tokenize could not be used: ${err.message.replace(/^--tokenizer server: /, '')})`);
  }
}

/** Tokenizer and workload for `run`: exact-length prompts, datasets, conversations or a trace. */
async function buildWorkload(opts: RunOptions, target: Target, tokenizer: Tokenizer): Promise<WorkloadSetup> {
  const deps = { tokenizer, seed: opts.seed };
  const w = opts.workload;
  const imageProblem = w.images ? imageApiProblem(target.api) : undefined;
  if (imageProblem) throw configError(imageProblem);
  // Ollama takes images on its chat route only, which applies the template: counted like OpenAI chat.
  const chat = target.api === 'openai-chat' || (target.api === 'ollama' && w.images !== undefined);
  const { prompt, output } = lengthDists(opts);
  const prefix = w.prefixTokens !== undefined ? { prefix: { tokens: w.prefixTokens, groups: w.prefixGroups ?? 1 } } : {};
  let spec: WorkloadSpec;
  if (w.trace) spec = { kind: 'trace', path: w.trace, chat, ...(w.timeScale !== undefined ? { timeScale: w.timeScale } : {}) };
  else if (w.data) {
    spec = {
      kind: 'dataset',
      path: w.data,
      chat,
      ...(w.dataColumn ? { column: w.dataColumn } : {}),
      ...(opts.profile !== 'grid' && opts.numPromptsGiven ? { numPrompts: opts.numPrompts } : {}),
      ...(w.outputTokensGiven || w.outputDist ? { output } : {}),
      defaultOutputTokens: opts.outputTokens,
    };
  } else if (w.turns) {
    spec = {
      kind: 'conversation',
      chat: true,
      turns: parseLengthDist(w.turns, '--turns'),
      userTokens: prompt,
      output,
      thinkTimeMs: w.thinkTime ? parseLengthDist(w.thinkTime, '--think-time') : 0,
      ...prefix,
    };
  } else spec = { kind: 'synthetic', chat, prompt, output, ...prefix };
  const built = await createWorkload(spec, deps);
  // Embeddings: each request carries --batch-size of these prompts as its inputs, and asks for no output.
  const text = isEmbeddingsApi(target.api) ? embeddingWorkload(built, opts.batchSize ?? DEFAULT_EMBEDDING_BATCH) : built;
  // --images: seeded noise PNGs on every request, made ahead of the sends (workload/images.ts).
  const withImg = (x: Workload): Workload => (w.images ? withImages(x, w.images, opts.seed) : x);
  const workload = withImg(text);

  const cells = new Map<string, Workload>();
  for (const input of opts.inputLens ?? []) {
    for (const out of opts.outputLens ?? []) {
      const cell = { kind: 'synthetic' as const, chat, prompt: { kind: 'fixed' as const, value: input }, output: { kind: 'fixed' as const, value: out }, ...prefix };
      cells.set(`${input}/${out}`, withImg(await createWorkload(cell, deps)));
    }
  }
  return { tokenizer, workload, workloadFor: (i, o) => cells.get(`${i}/${o}`) ?? workload };
}

/** Lengths-only workloads for `predict` (the simulator needs token counts, not text). */
export async function setupPredictWorkload(opts: RunOptions): Promise<{ workload: Workload; workloadFor: (i: number, o: number) => Workload }> {
  const w = opts.workload;
  if (w.data || w.turns) throw configError('predict models lengths only: use --scenario, --prompt-dist/--output-dist or --trace instead of --data/--turns');
  const { prompt, output } = lengthDists(opts);
  const trace = w.trace ? await loadTrace(w.trace, w.timeScale !== undefined ? { timeScale: w.timeScale } : {}) : undefined;
  // Shared prefixes as run builds them (the same groups for the same seed), named on each item instead of written.
  const prefix = w.prefixTokens !== undefined && !trace ? { tokens: w.prefixTokens, groups: w.prefixGroups ?? 1 } : undefined;
  const fixed = (i: number, o: number): Workload => createLengthsWorkload({ kind: 'fixed', value: i }, { kind: 'fixed', value: o }, opts.seed, undefined, prefix);
  return { workload: createLengthsWorkload(prompt, output, opts.seed, trace, prefix), workloadFor: fixed };
}
