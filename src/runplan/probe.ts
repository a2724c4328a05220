/**
 * What the server says about itself, asked before any load: GET probes only (detection, /v1/models). The answer
 * goes into the plan (`target.resolved`); a plan that has it is not probed again.
 */
import { imageApiFor } from '../config/image-options.js';
import type { RunOptions } from '../config/run-options.js';
import { InferbenchError, configError } from '../core/errors.js';
import { type DetectedEngine, detectEngine, listModels } from '../dialects/detect.js';
import { getDialect } from '../dialects/index.js';
import type { ApiName, Dialect } from '../dialects/types.js';
import type { RunPlan } from './schema.js';
import { checkServedModel } from './served-models.js';

export type ServerFacts = NonNullable<RunPlan['target']['resolved']>;

/** vLLM's legacy server and TGI serve one model and take no model name in the request. */
const MODEL_OPTIONAL = new Set(['vllm', 'tgi']);

/** The dialect a plan's resolved server speaks. */
export function dialectOf(facts: ServerFacts): Dialect {
  return getDialect(facts.dialect as ApiName);
}

/** `sim`: the built-in simulator serving at baseUrl, whose model is known without asking. `signal`: stops the probes. */
export async function probeServer(opts: RunOptions, baseUrl: string, sim: { model: string } | undefined, signal?: AbortSignal): Promise<ServerFacts> {
  const auth = { ...(opts.apiKey ? { apiKey: opts.apiKey } : {}), ...(signal ? { signal } : {}) };
  if (opts.api === 'auto') {
    const found = await detectEngine(baseUrl, auth);
    const model = opts.model ?? sim?.model ?? found.model ?? found.models[0] ?? (MODEL_OPTIONAL.has(found.api) ? 'served model' : undefined);
    if (!model) throw configError(`the server at ${baseUrl} lists no model`, 'pass --model NAME');
    if (opts.model && !sim) await checkServedModel(opts.model, { baseUrl, engine: found.engine, apiKey: opts.apiKey, models: found.models });
    // Images need a chat route: a server detected on its completions or native route is spoken to on its OpenAI chat route.
    const api = opts.workload.images ? imageApiFor(found.api) : found.api;
    const swapped = api !== found.api ? ` (its chat route: --images)` : '';
    return {
      dialect: api,
      model,
      engine: found.engine,
      detection: `${engineWithVersion(found)}, model ${model}, speaking ${api}${swapped} (${found.evidence}); override with --api`,
      ...(found.version ? { engineVersion: found.version } : {}),
      ...simHardwareOf(found),
    };
  }
  let model = opts.model ?? sim?.model;
  if (opts.model && !sim) await checkServedModel(opts.model, { baseUrl, engine: opts.api, apiKey: opts.apiKey });
  if (!model) {
    const models = await listModels(baseUrl, opts.apiKey).catch((err: unknown) => {
      if (err instanceof InferbenchError && err.code === 'E_CONNECT') throw err;
      return [] as string[];
    });
    model = models[0];
  }
  if (!model) throw configError(`could not read a model name from ${baseUrl}/v1/models`, 'pass --model NAME');
  // The API is the user's; the engine behind it is still worth knowing (its /tokenize gives exact prompt lengths,
  // and the run records it). GET probes only; a server detection cannot place stays named by its API.
  const found = await detectEngine(baseUrl, auth).catch(() => undefined);
  if (!found) return { dialect: opts.api, model, engine: opts.api };
  return {
    dialect: opts.api,
    model,
    engine: found.engine,
    detection: `${engineWithVersion(found)}, speaking ${opts.api} as asked (${found.evidence})`,
    ...(found.version ? { engineVersion: found.version } : {}),
    ...simHardwareOf(found),
  };
}

/** An `inferbench sim` target's GPU, count and quantization, recorded as a user's --gpu/--gpus/--quant would be. */
const simHardwareOf = (found: DetectedEngine): Pick<ServerFacts, 'simHardware'> => (found.simHardware ? { simHardware: { ...found.simHardware } } : {});

const engineWithVersion = (found: DetectedEngine): string => `${found.engine}${found.version ? ` ${found.version}` : ''}`;
