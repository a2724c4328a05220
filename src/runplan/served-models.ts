import { configError } from '../core/errors.js';
import { listModels } from '../dialects/detect.js';

/**
 * Engines that serve one model and accept any name in the request (TGI takes "tgi" by convention, llama.cpp
 * outside router mode ignores the field): a name they do not list is not an error there.
 */
const NAME_IGNORED = new Set(['tgi', 'llamacpp', 'vllm-legacy']);
/** Triton's detection lists only the models that take text_input under the usual names, not its whole repository. */
const PARTIAL_LIST = new Set(['triton']);

/** Ollama resolves a bare name to its `:latest` tag. */
function served(model: string, models: readonly string[]): boolean {
  return models.includes(model) || models.includes(`${model}:latest`);
}

/**
 * `--model` names a model the server lists, checked before any request: otherwise every request fails with a
 * 404 (or, worse, a server routes it elsewhere) after the run has started. `models` is what detection read;
 * when undefined (`--api` given, no detection) /v1/models is asked, and a server without that list is trusted.
 */
export async function checkServedModel(
  model: string,
  target: { baseUrl: string; engine: string; apiKey?: string | undefined; models?: readonly string[] },
): Promise<void> {
  if (PARTIAL_LIST.has(target.engine) || (NAME_IGNORED.has(target.engine) && (target.models?.length ?? 0) <= 1)) return;
  const models = target.models ?? (await listModels(target.baseUrl, target.apiKey).catch(() => [] as string[]));
  if (models.length === 0 || served(model, models)) return;
  const shown = models.length > 8 ? `${models.slice(0, 8).join(', ')} and ${models.length - 8} more` : models.join(', ');
  throw configError(`--model ${model}: the server at ${target.baseUrl} serves ${shown}`, 'pass one of those with --model, or leave --model out to use the first');
}
