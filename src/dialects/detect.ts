import { InferbenchError, configError } from '../core/errors.js';
import { type Json, count, errorMessage, isObj, str } from './_shared.js';
import { Prober, type Reply } from './detect-http.js';
import type { SimHardware } from './sim-hardware.js';
import type { ApiName } from './types.js';

export type EngineName =
  | 'vllm'
  | 'vllm-legacy'
  | 'tgi'
  | 'sglang'
  | 'lmdeploy'
  | 'llamacpp'
  | 'triton'
  | 'ollama'
  | 'openai'
  | 'openai-compatible';

export interface DetectedEngine {
  engine: EngineName;
  /** The dialect to use; see API_FOR for why. */
  api: ApiName;
  version?: string;
  model?: string;
  models: string[];
  maxContext?: number;
  /** One human line: what answered. */
  evidence: string;
  /** The built-in simulator's GPU, GPU count and quantization (its x-sim-* headers); absent for any other server. */
  simHardware?: SimHardware;
}

export interface DetectOptions {
  apiKey?: string;
  /** Per probe; default 3000 ms. */
  timeoutMs?: number;
  /** Stops the probes (the run's Ctrl-C while starting). */
  signal?: AbortSignal;
}

/**
 * OpenAI completions where the server reports exact usage there (vLLM, SGLang, llama.cpp): the prompt
 * is sent untemplated, so prompt lengths stay exact. lmdeploy: chat, whose usage is documented for every
 * release (its /generate is ≥0.11 only). TGI and Ollama: native, because their native final events
 * carry exact counts on every release while their OpenAI routes only gained usage later. OpenAI and
 * unknown servers: chat (OpenAI's /v1/completions serves only legacy models).
 */
const API_FOR: Record<EngineName, ApiName> = {
  vllm: 'openai-completions',
  'vllm-legacy': 'vllm',
  tgi: 'tgi',
  sglang: 'openai-completions',
  lmdeploy: 'openai-chat',
  llamacpp: 'openai-completions',
  triton: 'triton',
  ollama: 'ollama',
  openai: 'openai-chat',
  'openai-compatible': 'openai-chat',
};

/** Identify the server behind `baseUrl` with GET probes in wire-formats.md §10 order. */
export async function detectEngine(baseUrl: string, opts: DetectOptions = {}): Promise<DetectedEngine> {
  const p = new Prober(baseUrl, opts);
  const d = await identify(p);
  if (p.simHardware) d.simHardware = p.simHardware;
  return d;
}

async function identify(p: Prober): Promise<DetectedEngine> {
  const root = await p.get('/', true);
  if (isLlamacpp(root)) return llamacppFrom(p, undefined, 'response header Server: llama.cpp');
  if (root?.status === 200 && root.text.trim() === 'Ollama is running') return ollamaFrom(p);

  const v2 = await p.get('/v2');
  if (ok(v2) && v2.json['name'] === 'triton') return tritonFrom(p, v2.json);

  const info = await p.get('/info');
  if (ok(info) && typeof info.json['model_id'] === 'string' && info.json['max_total_tokens'] !== undefined) {
    const model = str(info.json['model_id']);
    return found('tgi', `GET /info has model_id + max_total_tokens (${str(info.json['router']) ?? 'tgi'})`, {
      version: str(info.json['version']),
      model,
      models: model === undefined ? [] : [model],
      maxContext: count(info.json['max_total_tokens']),
    });
  }

  const gmi = await p.get('/get_model_info');
  if (ok(gmi) && typeof gmi.json['model_path'] === 'string' && 'is_generation' in gmi.json) {
    const server = await p.get('/get_server_info');
    const list = await modelList(p);
    const si = ok(server) ? server.json : {};
    return found('sglang', 'GET /get_model_info has model_path + is_generation', {
      version: str(si['version']),
      models: list.models.length > 0 ? list.models : [gmi.json['model_path']],
      maxContext: count(si['context_length']) ?? list.maxContext,
    });
  }

  const props = await p.get('/props');
  if (isLlamacpp(props) || (ok(props) && ('default_generation_settings' in props.json || 'build_info' in props.json))) {
    return llamacppFrom(p, props, 'GET /props has default_generation_settings/build_info');
  }

  const version = await p.get('/version');
  const list = await modelList(p);
  if (ok(version) && Object.keys(version.json).length === 1 && typeof version.json['version'] === 'string') {
    if (list.ownedBy === undefined || list.ownedBy === 'vllm') {
      const how = list.ownedBy === 'vllm' ? ', /v1/models owned_by vllm' : '';
      return found('vllm', `GET /version has only "version"${how}`, { ...list, version: version.json['version'] });
    }
  }
  if (list.reply?.status === 200) return fromModelList(list);
  if (list.reply?.status === 401 || list.reply?.status === 403) {
    throw configError(
      `GET ${p.base}/v1/models answered ${list.reply.status}: ${errorMessage(list.reply.status, list.reply.text)}`,
      'pass the server API key (--api-key), or name the API with --api',
    );
  }
  const health = await p.get('/health');
  if (list.reply?.status === 404 && health?.status === 200) {
    return found('vllm-legacy', 'GET /health is 200 but there is no /v1/models: assuming the vLLM legacy api_server', {
      models: [],
    });
  }
  const failing = everyProbeFailed(p);
  if (failing) throw configError(failing, 'check the server\'s log, or name its API with --api to skip detection');
  throw configError(`could not identify the inference server at ${p.base}`, 'name its API with --api (e.g. --api openai-chat)');
}

/** Every probe answered with the same server error (5xx): the server is up but failing, not unknown. */
function everyProbeFailed(p: Prober): string | undefined {
  const statuses = new Set(p.answered.map((a) => a.status));
  const [status] = statuses;
  if (statuses.size !== 1 || status === undefined || status < 500) return undefined;
  const paths = p.answered.map((a) => a.path).join(', ');
  return `every probe of ${p.base} got HTTP ${status} (GET ${paths}): the server is up but failing every request`;
}

/** GET /v1/models → model ids. */
export async function listModels(baseUrl: string, apiKey?: string): Promise<string[]> {
  const p = new Prober(baseUrl, apiKey === undefined ? {} : { apiKey });
  const reply = await p.get('/v1/models', true);
  if (reply === undefined || reply.status < 200 || reply.status >= 300) {
    const status = reply?.status ?? 0;
    throw new InferbenchError('E_HTTP_STATUS', `GET ${p.base}/v1/models answered ${status}: ${errorMessage(status, reply?.text ?? '')}`);
  }
  return parseModels(reply.json).models;
}

interface ModelList {
  reply?: Reply;
  models: string[];
  ownedBy?: string;
  maxContext?: number;
}

async function modelList(p: Prober): Promise<ModelList> {
  const reply = await p.get('/v1/models');
  return reply?.status === 200 ? { reply, ...parseModels(reply.json) } : reply === undefined ? { models: [] } : { reply, models: [] };
}

function parseModels(json: unknown): Omit<ModelList, 'reply'> {
  const data = isObj(json) && Array.isArray(json['data']) ? json['data'] : [];
  const out: Omit<ModelList, 'reply'> = { models: [] };
  for (const m of data) {
    if (!isObj(m)) continue;
    const id = str(m['id']);
    if (id !== undefined) out.models.push(id);
    out.ownedBy ??= str(m['owned_by']);
    const meta = m['meta'];
    out.maxContext ??= count(m['max_model_len']) ?? (isObj(meta) ? count(meta['n_ctx_train']) : undefined);
  }
  return out;
}

const OWNERS: Record<string, EngineName> = {
  vllm: 'vllm',
  sglang: 'sglang',
  lmdeploy: 'lmdeploy',
  llamacpp: 'llamacpp',
  library: 'ollama',
  openai: 'openai',
  system: 'openai',
  'openai-internal': 'openai',
  'Triton Inference Server': 'triton',
};

function fromModelList(list: ModelList): DetectedEngine {
  const headers = list.reply?.headers;
  const openaiHeaders = headers?.has('openai-version') === true || headers?.has('openai-processing-ms') === true;
  const engine = (list.ownedBy === undefined ? undefined : OWNERS[list.ownedBy]) ?? (openaiHeaders ? 'openai' : 'openai-compatible');
  const owner = list.ownedBy === undefined ? '' : ` (owned_by "${list.ownedBy}")`;
  const d = found(engine, `GET /v1/models answered${owner}${openaiHeaders ? ' with openai-* headers' : ''}`, list);
  // Triton's separate OpenAI frontend speaks OpenAI, not the generate extension.
  if (engine === 'triton' || engine === 'ollama') d.api = 'openai-chat';
  return d;
}

async function ollamaFrom(p: Prober): Promise<DetectedEngine> {
  const version = await p.get('/api/version');
  const tags = await p.get('/api/tags');
  const ps = await p.get('/api/ps');
  const models = ok(tags) && Array.isArray(tags.json['models']) ? tags.json['models'].filter(isObj).map((m) => str(m['name']) ?? '') : [];
  const loaded = ok(ps) && Array.isArray(ps.json['models']) ? ps.json['models'].find(isObj) : undefined;
  return found('ollama', 'GET / answered "Ollama is running"', {
    version: ok(version) ? str(version.json['version']) : undefined,
    models,
    maxContext: loaded === undefined ? undefined : count(loaded['context_length']),
  });
}

async function tritonFrom(p: Prober, v2: Json): Promise<DetectedEngine> {
  const models: string[] = [];
  for (const name of ['ensemble', 'tensorrt_llm_bls']) {
    const meta = await p.get(`/v2/models/${name}`);
    if (ok(meta) && Array.isArray(meta.json['inputs']) && meta.json['inputs'].some((i) => isObj(i) && i['name'] === 'text_input')) {
      models.push(name);
    }
  }
  const how = models.length > 0 ? `; ${models.join(', ')} take text_input` : '; no ensemble/tensorrt_llm_bls model found, pass --model';
  return found('triton', `GET /v2 answered name "triton"${how}`, { version: str(v2['version']), models });
}

async function llamacppFrom(p: Prober, props: Reply | undefined, evidence: string): Promise<DetectedEngine> {
  const pr = props ?? (await p.get('/props'));
  const list = await modelList(p);
  const j = ok(pr) ? pr.json : {};
  const dgs = isObj(j['default_generation_settings']) ? j['default_generation_settings'] : {};
  const path = str(j['model_path']);
  return found('llamacpp', evidence, {
    ...list,
    version: str(j['build_info']),
    models: list.models.length > 0 ? list.models : path === undefined ? [] : [path.replace(/^.*[\\/]/, '').replace(/\.gguf$/, '')],
    maxContext: count(dgs['n_ctx']) ?? count(j['n_ctx']) ?? list.maxContext,
  });
}

function found(
  engine: EngineName,
  evidence: string,
  d: { version?: string | undefined; model?: string | undefined; models: string[]; maxContext?: number | undefined },
): DetectedEngine {
  const out: DetectedEngine = { engine, api: API_FOR[engine], models: d.models, evidence };
  const model = d.model ?? d.models[0];
  if (d.version !== undefined) out.version = d.version;
  if (model !== undefined && model !== '') out.model = model;
  if (d.maxContext !== undefined) out.maxContext = d.maxContext;
  return out;
}

function ok(r: Reply | undefined): r is Reply & { json: Json } {
  return r !== undefined && r.status >= 200 && r.status < 300 && isObj(r.json);
}

function isLlamacpp(r: Reply | undefined): boolean {
  return (r?.headers.get('server') ?? '').toLowerCase().includes('llama.cpp');
}

