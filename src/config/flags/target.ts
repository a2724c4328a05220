/** Flags of the target section: the server and how requests are sent to it, timeouts, what it runs on. */
import { SIM_ENGINE_NAMES } from '../../sim/engine/profiles.js';
import { DEFAULT_SIM } from '../../sim/default-sim.js';
import { KV_CACHE_DTYPE_HELP, parseKvCacheDtypeFlag } from '../kv-cache-dtype.js';
import { parseJsonObject, type Problems } from '../parse.js';
import { BALANCE_POLICIES } from '../../load/replica-sender.js';
import { parsePowerGpus, parsePowerSource, POWER_SOURCE_HELP } from '../../power/source-spec.js';
import { choice, seconds, text, wholeNumber } from './parsers.js';
import { flag, type FlagCommand } from './spec.js';

export const API_CHOICES = [
  'auto',
  'openai-chat',
  'openai-completions',
  'vllm',
  'tgi',
  'sglang',
  'lmdeploy',
  'llamacpp',
  'triton',
  'ollama',
  'openai-embeddings',
  'tei-embeddings',
] as const;
/** An HTTP header name (RFC 9110 token). */
function headerName(raw: string, p: Problems, flag: string): string | undefined {
  if (/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(raw)) return raw;
  p.push(`${flag} ${JSON.stringify(raw)} is not an HTTP header name; write it like ${flag} X-Session-ID`);
  return undefined;
}
export const DEFAULT_SESSION_HEADER = 'X-Session-ID';
const REASONING_FORMATS = ['fields', 'think-tags'] as const;
const RUN: readonly FlagCommand[] = ['run'];

export const TARGET_FLAGS = [
  flag({ name: 'target', arg: 'url', section: 'target', group: 'target', commands: RUN, shown: 'the built-in simulated engine', joinRepeats: true,
    help: 'server base URL, e.g. http://127.0.0.1:8000' }),
  flag({ name: 'balance', arg: 'policy', section: 'target', group: 'replicas', commands: RUN, shown: 'round-robin', choices: BALANCE_POLICIES,
    help: 'over several --target URL,URL,… (or repeated): round-robin | least-inflight | session (a conversation stays on one replica)', parse: choice(BALANCE_POLICIES) }),
  flag({ name: 'session-header', arg: 'name', section: 'target', group: 'replicas', commands: RUN, shown: DEFAULT_SESSION_HEADER,
    help: "conversations: sent with the conversation's id on every turn (a router's affinity)", parse: headerName }),
  flag({ name: 'replica-header', arg: 'name', section: 'target', group: 'replicas', commands: RUN,
    help: 'response header naming the replica that served each request (a router): per-replica figures behind one URL', parse: headerName }),
  flag({ name: 'api', arg: 'name', section: 'target', group: 'target', commands: RUN, value: 'auto',
    help: `${API_CHOICES.join(' | ')} (auto picks a generation API)`, parse: choice(API_CHOICES) }),
  flag({ name: 'model', arg: 'name', section: 'target', group: 'target', commands: RUN, shown: `the server's first /v1/models entry; simulated: ${DEFAULT_SIM.model}`,
    help: 'model name', parse: text }),
  flag({ name: 'api-key', arg: 'key', section: 'target', group: 'target', commands: RUN, shown: '$OPENAI_API_KEY', help: 'bearer token, never written anywhere', parse: text }),
  flag({ name: 'extra-body', arg: 'json', section: 'target', group: 'target', commands: RUN,
    help: 'JSON object merged into every request body', parse: (raw, p, name) => parseJsonObject(name, raw, p) }),
  flag({ name: 'no-stream', section: 'target', group: 'target', commands: RUN, help: 'non-streaming requests (no TTFT/ITL)' }),
  flag({ name: 'reasoning-format', arg: 'f', section: 'target', group: 'target', commands: RUN, value: 'fields', choices: REASONING_FORMATS,
    help: "reasoning models: fields (the engine's reasoning field) | think-tags (inline <think>…</think>)", parse: choice(REASONING_FORMATS) }),
  flag({ name: 'batch-size', arg: 'n', section: 'target', group: 'target', commands: RUN, shown: '1',
    help: 'embeddings APIs: inputs (texts) per request', parse: wholeNumber() }),
  flag({ name: 'no-force-length', section: 'target', group: 'target', commands: RUN, help: 'do not send ignore_eos/min_tokens; let the server stop early' }),
  // The run plan (src/runplan/): read by cli/main.ts and cli/run-plan-flags.ts, not by the option resolvers.
  flag({ name: 'dry-run', section: 'outputs', group: 'target', commands: RUN, help: 'resolve the run (GET probes, /tokenize; no load) and print its plan as JSON' }),
  flag({ name: 'plan', arg: 'file', section: 'outputs', group: 'target', commands: RUN, help: 'run a saved plan (--dry-run JSON or manifest.json); with output flags only' }),

  flag({ name: 'timeout-connect', arg: 'time', section: 'target', group: 'timeouts', commands: RUN, value: '10', shown: '10s',
    help: 'to open a connection', parse: seconds({ positive: true }) }),
  flag({ name: 'timeout-first-byte', arg: 'time', section: 'target', group: 'timeouts', commands: RUN, value: '600', shown: '10m',
    help: 'to the response headers', parse: seconds({ positive: true }) }),
  flag({ name: 'timeout-idle', arg: 'time', section: 'target', group: 'timeouts', commands: RUN, value: '120', shown: '2m',
    help: 'longest gap between chunks', parse: seconds({ positive: true }) }),
  flag({ name: 'timeout-request', arg: 'time', section: 'target', group: 'timeouts', commands: RUN, value: '1800', shown: '30m',
    help: 'whole request', parse: seconds({ positive: true }) }),

  flag({ name: 'power', arg: 'source', section: 'target', group: 'power', commands: RUN, shown: "auto (the target's /metrics when it has DCGM power)",
    help: `GPU power over each row's window, for J/token: ${POWER_SOURCE_HELP}`,
    parse: (raw, p) => {
      const r = parsePowerSource(raw);
      if ('problem' in r) return void p.push(r.problem);
      return r;
    } }),
  flag({ name: 'power-gpus', arg: 'list', section: 'target', group: 'power', commands: RUN, shown: 'every GPU the source reports',
    help: "the deployment's GPUs whose power counts, e.g. 0,1",
    parse: (raw, p) => {
      const r = parsePowerGpus(raw);
      if ('problem' in r) return void p.push(r.problem);
      return r;
    } }),

  flag({ name: 'engine-version', arg: 'v', section: 'target', group: 'metadata', commands: RUN, shown: 'the version the server reports', help: 'engine version', parse: text }),
  flag({ name: 'gpu', arg: 'name', section: 'target', group: 'metadata', commands: RUN, shown: `simulated: ${DEFAULT_SIM.gpu}`,
    help: 'GPU (simulated: the GPU modelled)', parse: text }),
  flag({ name: 'gpus', arg: 'n', section: 'target', group: 'metadata', commands: RUN, shown: `simulated: ${DEFAULT_SIM.gpus}`,
    help: 'GPU count (simulated: tensor-parallel size)', parse: wholeNumber() }),
  flag({ name: 'quant', arg: 'q', section: 'target', group: 'metadata', commands: RUN, shown: 'simulated: from the model name',
    help: 'quantization (simulated: awq | gptq-int4 | gptq-int8)', parse: text }),

  flag({ name: 'engine', arg: 'name', section: 'target', group: 'embedded', commands: RUN, shown: DEFAULT_SIM.engine,
    help: `simulated engine: ${SIM_ENGINE_NAMES.join(' | ')}`, parse: text }),
  flag({ name: 'kv-cache-dtype', arg: 't', section: 'target', group: 'embedded', commands: RUN, shown: KV_CACHE_DTYPE_HELP.shown,
    help: KV_CACHE_DTYPE_HELP.text, parse: (raw, p) => parseKvCacheDtypeFlag(raw, p) }),
] as const;
