import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { configError } from '../../core/errors.js';
import { registerHardware, registerModel, validateModel } from './registry.js';
import type { HardwareSpec, LinkKind, ModelSpec } from './types.js';

export interface LoadedCatalog {
  models: ModelSpec[];
  hardware: HardwareSpec[];
}

type Json = Record<string, unknown>;

const num = (o: Json, ...keys: string[]): number | undefined => {
  for (const k of keys) {
    const v = o[k];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return undefined;
};

/**
 * Parse a Hugging Face config.json (llama, mistral, qwen2, qwen2_moe, mixtral, qwen, chatglm).
 * `fallbackName` is used when the file has no `_name_or_path`.
 */
export function modelFromHfConfig(cfg: Json, fallbackName: string): ModelSpec {
  const nameOrPath = typeof cfg['_name_or_path'] === 'string' && cfg['_name_or_path'] ? cfg['_name_or_path'] : '';
  const name = (nameOrPath || fallbackName).replace(/\/+$/, '').replace(/^.*\//, '');
  const mt = String(cfg['model_type'] ?? '').toLowerCase();
  const hidden = num(cfg, 'hidden_size', 'n_embd', 'd_model');
  const layers = num(cfg, 'num_hidden_layers', 'num_layers', 'n_layer');
  const heads = num(cfg, 'num_attention_heads', 'n_head');
  let kvHeads = num(cfg, 'num_key_value_heads', 'multi_query_group_num') ?? heads;
  if (mt === 'chatglm' && cfg['multi_query_attention'] === false) kvHeads = heads;
  let ffn = num(cfg, 'intermediate_size', 'ffn_hidden_size', 'n_inner');
  // Qwen1 lists intermediate_size as twice the per-matrix width.
  if (mt === 'qwen' && ffn) ffn = ffn / 2;
  const vocab = num(cfg, 'vocab_size', 'padded_vocab_size');
  // vLLM takes the smallest of the context-length keys present.
  const lens = ['max_position_embeddings', 'seq_length', 'max_sequence_length', 'max_seq_len', 'n_positions']
    .map((k) => num(cfg, k))
    .filter((v): v is number => v !== undefined);
  const maxModelLen = lens.length ? Math.min(...lens) : 4096;
  if (!hidden || !layers || !heads || !vocab) {
    throw configError(`${fallbackName}: not a recognised model config (need hidden_size, num_hidden_layers, num_attention_heads, vocab_size)`);
  }
  const headDim = num(cfg, 'head_dim', 'kv_channels') ?? hidden / heads;
  const spec: ModelSpec = {
    name, layers, hidden, heads, kvHeads: kvHeads ?? heads, headDim, ffn: ffn ?? 4 * hidden, vocab,
    tiedEmbeddings: cfg['tie_word_embeddings'] === true, maxModelLen, source: `config.json (${mt || 'unknown type'})`,
  };
  const experts = num(cfg, 'num_experts', 'num_local_experts', 'n_routed_experts');
  if (experts && experts > 1) {
    spec.moe = {
      experts,
      activeExperts: num(cfg, 'num_experts_per_tok', 'num_experts_per_token') ?? 2,
      expertFfn: num(cfg, 'moe_intermediate_size') ?? spec.ffn,
      sharedExpertFfn: num(cfg, 'shared_expert_intermediate_size') ?? 0,
    };
  }
  validateModel(spec);
  return spec;
}

function isHfConfig(o: Json): boolean {
  return 'hidden_size' in o || 'model_type' in o || 'architectures' in o || 'num_layers' in o;
}

const LINKS: LinkKind[] = ['nvlink', 'pcie', 'pcie-no-p2p'];

function hardwareFromJson(o: Json, key: string): HardwareSpec {
  const tflops = num(o, 'tflops', 'fp16DenseTflops');
  const memGiB = num(o, 'memGiB', 'memGB');
  const bwGBs = num(o, 'bwGBs', 'memBwGBs');
  const linkRaw = String(o['link'] ?? (num(o, 'nvlinkGBs') ? 'nvlink' : 'pcie'));
  if (!tflops || !memGiB || !bwGBs) throw configError(`hardware ${key}: need tflops, memGiB, bwGBs`);
  if (!LINKS.includes(linkRaw as LinkKind)) throw configError(`hardware ${key}: link must be one of ${LINKS.join(', ')}`);
  const aliases = Array.isArray(o['aliases']) ? o['aliases'].map(String) : undefined;
  return { name: String(o['name'] ?? key), tflops, memGiB, bwGBs, link: linkRaw as LinkKind, ...(aliases ? { aliases } : {}) };
}

function modelFromJson(o: Json, key: string): ModelSpec {
  if (isHfConfig(o) && !('layers' in o)) return modelFromHfConfig(o, key);
  const spec = { ...o, name: String(o['name'] ?? key) } as unknown as ModelSpec;
  if (spec.tiedEmbeddings === undefined) spec.tiedEmbeddings = false;
  if (spec.ffn === undefined || spec.ffn === null) spec.ffn = 0;
  validateModel(spec);
  return spec;
}

/** Parse catalog JSON text: the catalog's own shape `{models:{..}, hardware:{..}}` or an HF config.json. */
export function parseCatalogJson(text: string, path: string): LoadedCatalog {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw configError(`${path}: not valid JSON (${(err as Error).message})`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw configError(`${path}: expected a JSON object`);
  const obj = data as Json;
  if (isHfConfig(obj)) return { models: [modelFromHfConfig(obj, basename(dirname(path)) || basename(path))], hardware: [] };
  const out: LoadedCatalog = { models: [], hardware: [] };
  const section = (v: unknown): [string, Json][] =>
    Array.isArray(v)
      ? v.map((e, i) => [String((e as Json)['name'] ?? i), e as Json])
      : Object.entries((v ?? {}) as Record<string, Json>);
  for (const [k, v] of section(obj['models'])) out.models.push(modelFromJson(v, k));
  for (const [k, v] of section(obj['hardware'])) out.hardware.push(hardwareFromJson(v, k));
  if (!out.models.length && !out.hardware.length) throw configError(`${path}: no "models" or "hardware" entries`);
  return out;
}

/** Load a catalog file and register its entries (they take precedence over built-ins). */
export function loadCatalogFile(path: string): LoadedCatalog {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw configError(`cannot read catalog file ${path}: ${(err as Error).message}`);
  }
  const cat = parseCatalogJson(text, path);
  for (const m of cat.models) registerModel(m);
  for (const h of cat.hardware) registerHardware(h);
  return cat;
}
