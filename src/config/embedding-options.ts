import { findEngineProfile } from '../sim/engine/profiles.js';
import { EMBEDDING_WIRES } from '../sim/wire/embedding-wires.js';
import { parseNumber, type Problems } from './parse.js';
import type { RunOptions } from './options.js';

/** What an embeddings run decides for itself: nothing generated or streamed, `--batch-size` inputs per request. */
export interface EmbeddingSettings {
  batchSize: number;
  outputTokens: 0;
  stream: false;
  forceLength: false;
}

/** What the check reads of the other options (after the profile is reconciled). */
export type EmbeddingContext = Pick<RunOptions, 'api' | 'slo' | 'reasoningFormat' | 'workload' | 'profile' | 'target' | 'engine'>;

export const EMBEDDING_APIS = ['openai-embeddings', 'tei-embeddings'] as const;

const isEmbeddingApi = (api: string): boolean => (EMBEDDING_APIS as readonly string[]).includes(api);

/**
 * `--api openai-embeddings | tei-embeddings`: returns what an embeddings run implies (no output, nothing streamed,
 * `--batch-size` inputs per request) and names every flag that cannot mean anything for it, one problem each.
 * Without such an API (undefined), `--batch-size` is the only flag to check. Changes nothing it is given.
 */
export function resolveEmbeddingOptions(raw: { batchSize?: string | undefined }, opts: EmbeddingContext, p: Problems): EmbeddingSettings | undefined {
  if (!isEmbeddingApi(opts.api)) {
    if (raw.batchSize !== undefined) p.push('--batch-size sets the inputs per embeddings request; it goes with --api openai-embeddings or tei-embeddings');
    return undefined;
  }
  const api = opts.api;
  const batch = parseNumber('--batch-size', raw.batchSize, p, { integer: true, positive: true }) ?? 1;
  const w = opts.workload;
  const why = `${api} replies are vectors, not generated tokens`;
  if (opts.slo?.ttftMs !== undefined || opts.slo?.itlMs !== undefined) {
    p.push(`--slo ${[opts.slo.ttftMs !== undefined && 'ttft', opts.slo.itlMs !== undefined && 'itl'].filter(Boolean).join(' and ')}: ${why} (no first token, no gaps between tokens); limit the latency with --slo e2e:MS`);
  }
  if (opts.reasoningFormat === 'think-tags') p.push(`--reasoning-format think-tags: ${why}, with no reasoning in them; leave it out`);
  if (w.turns) p.push(`--turns: ${why}; a conversation needs replies to resend, so embed single texts (leave --turns out)`);
  if (w.outputTokensGiven || w.outputDist) p.push(`--output-tokens/--output-dist: ${why}; set the input length with --prompt-tokens or --prompt-dist`);
  if (w.scenario) p.push(`--scenario sets output lengths too; ${why}: use --prompt-tokens or --prompt-dist`);
  if (opts.profile === 'grid') p.push(`--profile grid crosses prompt and output lengths; ${why}: use --profile sweep, constant, concurrent or capacity with --prompt-tokens`);
  if (w.trace && batch > 1) p.push('--trace sends one request per trace line at its time; with --batch-size they cannot keep those times: leave --batch-size out');
  if (opts.target === undefined) {
    if (api === 'tei-embeddings') p.push('--api tei-embeddings needs --target (a text-embeddings-inference server); the built-in simulator serves /v1/embeddings: use --api openai-embeddings');
    else if (opts.engine !== undefined) {
      let wire: string | undefined;
      try {
        wire = findEngineProfile(opts.engine).wire;
      } catch {
        // an unknown engine is reported where the simulator starts
      }
      if (wire !== undefined && !(EMBEDDING_WIRES as readonly string[]).includes(wire)) {
        p.push(`--engine ${opts.engine}: that engine serves no /v1/embeddings; simulate one that does (${EMBEDDING_WIRES.join(', ')})`);
      }
    }
  }
  // Nothing is generated or streamed: the reply is the vectors, in one body.
  return { batchSize: batch, outputTokens: 0, stream: false, forceLength: false };
}
