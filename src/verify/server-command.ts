/**
 * The command that starts one candidate's server for `plan --verify`: a template of the user's filled with the
 * candidate's fields, the launch command the plan prints (with the engine's port flag), or `inferbench sim` with the
 * candidate's configuration. `{port}` is filled per launch with a free port.
 */
import { fillPlaceholders, placeholdersIn } from '../launch/server-process.js';
import { configError } from '../core/errors.js';
import { checkpointName } from '../plan/launch.js';
import { engineOptions } from '../plan/space.js';
import type { PlanCandidate } from '../plan/types.js';
import type { ServerCommandSource } from './types.js';

/** The placeholders a `--server-cmd` template may use. */
export const TEMPLATE_KEYS = ['engine', 'model', 'checkpoint', 'gpu', 'gpus', 'quant', 'kvCacheDtype', 'name', 'port'] as const;

/** A template with a placeholder that no candidate has is a usage mistake, found before the plan runs. */
export function checkTemplate(template: string): void {
  const unknown = placeholdersIn(template).filter((k) => !(TEMPLATE_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw configError(`--server-cmd: unknown placeholder ${unknown.map((k) => `{${k}}`).join(', ')}`, `a template may use ${TEMPLATE_KEYS.map((k) => `{${k}}`).join(' ')}`);
  }
}

/** `1x-A100-80GB-fp16-vllm`: a candidate as a folder name. */
export function candidateName(c: Pick<PlanCandidate, 'gpu' | 'gpus' | 'quant' | 'engine'>): string {
  return `${c.gpus}x-${c.gpu}-${c.quant}-${c.engine}`.replace(/[^A-Za-z0-9._-]+/g, '_');
}

/** The values a template is filled with (the port given per launch). */
export function templateValues(model: string, c: PlanCandidate, kvCacheDtype: string | undefined, port: number): Record<string, string | number> {
  return {
    engine: c.engine,
    model,
    checkpoint: checkpointName(model, c.quant),
    gpu: c.gpu,
    gpus: c.gpus,
    quant: c.quant,
    kvCacheDtype: kvCacheDtype ?? 'auto',
    name: candidateName(c),
    port,
  };
}

/** A word for /bin/sh: left as is when it is plainly safe, single-quoted otherwise. */
export function shellWord(s: string): string {
  return /^[\w.,:/@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * How each engine's own server takes its port (the plan's launch commands leave it at the engine's default).
 * TGI's launch is a `docker run` that maps host 8080 to the container's 80: the host side becomes the port.
 */
function withPort(engine: string, launch: string): string {
  switch (engine) {
    case 'lmdeploy':
      return `${launch} --server-port {port}`;
    case 'tgi':
      return launch.replace('-p 8080:80', '-p {port}:80');
    case 'ollama':
      return launch.replace(/^OLLAMA_NUM_PARALLEL=(\d+) ollama serve/, 'OLLAMA_HOST=127.0.0.1:{port} OLLAMA_NUM_PARALLEL=$1 ollama serve');
    case 'mlc-llm':
    case 'llamacpp':
    case 'vllm':
    case 'vllm-v0':
    case 'vllm-legacy':
    case 'sglang':
    case 'triton':
    case 'trtllm':
    default:
      return `${launch} --port {port}`;
  }
}

/** The candidate's server command with `{port}` still in it. */
export function serverTemplate(source: ServerCommandSource, model: string, c: PlanCandidate, kvCacheDtype: string | undefined): string {
  if (source.kind === 'template') return source.template;
  if (source.kind === 'launch') {
    if (!c.launch) throw configError(`${candidateName(c)}: the plan has no launch command for it`, 'use --server-cmd TEMPLATE');
    // A comment after the command (TRT-LLM's kv-cache.yaml note) would swallow the port flag.
    return withPort(c.engine, c.launch.replace(/\s+#.*$/, ''));
  }
  const e = engineOptions(model, c);
  const words = [
    ...source.argv,
    'sim',
    '--engine', e.engine, '--model', e.model, '--gpu', e.gpu, '--gpus', String(e.gpus),
    ...(e.quant !== undefined ? ['--quant', e.quant] : []),
    ...(kvCacheDtype !== undefined ? ['--kv-cache-dtype', kvCacheDtype] : []),
    ...source.catalogFiles.flatMap((f) => ['--catalog', f]),
    '--seed', String(source.seed),
  ];
  return `${words.map(shellWord).join(' ')} --port {port}`;
}

/** The command as run: the template filled for this candidate and port. */
export function serverCommand(source: ServerCommandSource, model: string, c: PlanCandidate, kvCacheDtype: string | undefined, port: number): string {
  return fillPlaceholders(serverTemplate(source, model, c, kvCacheDtype), templateValues(model, c, kvCacheDtype, port));
}
