import { configError } from '../core/errors.js';
import type { ChatMessage } from '../dialects/types.js';
import { loadApproxTokenizer, type Tokenizer } from './tokenizer.js';
import type { TokenCounter } from './word-model.js';

/** Engines whose /tokenize the client can calibrate against (wire-formats.md §1.6, §3.7, §4.6, §6.6). */
export type TokenizeApi = 'vllm' | 'sglang' | 'tgi' | 'llamacpp';

/**
 * Counts through the server's own tokenizer. encode/decode are the approximate tokenizer's (used only to count
 * output text when the server reports none); prompt lengths come from the word model the server confirmed.
 */
export interface ServerTokenizer extends Tokenizer, TokenCounter {
  readonly exact: true;
  readonly api: TokenizeApi;
  /** HTTP requests sent to the server's tokenizer so far. */
  readonly requests: number;
}

export interface ServerTokenizerOptions {
  /** Model name (vLLM's /tokenize and TGI's /chat_tokenize want one). */
  model?: string;
  timeoutMs?: number;
  /** Stops the calibration's requests (the run's Ctrl-C while starting). */
  signal?: AbortSignal;
}

type Post = (path: string, body: unknown) => Promise<unknown>;

const ROUTES: Record<TokenizeApi, string> = { vllm: '/tokenize', sglang: '/v1/tokenize', tgi: '/tokenize', llamacpp: '/tokenize' };

/**
 * vLLM `POST /tokenize {model,prompt|messages}` → count; SGLang `POST /v1/tokenize {prompt: [...]}` → counts (one
 * request for a whole batch); TGI `POST /tokenize {inputs}` → token array, `/chat_tokenize` for chats; llama.cpp
 * `POST /tokenize {content}` → tokens, `/apply-template` then /tokenize for chats. Probes once to fail early.
 */
export async function createServerTokenizer(
  baseUrl: string,
  api: TokenizeApi,
  apiKey?: string,
  opts: ServerTokenizerOptions = {},
): Promise<ServerTokenizer> {
  const base = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) headers['authorization'] = `Bearer ${apiKey}`;
  let requests = 0;
  const post: Post = async (path, body) => {
    requests++;
    const url = base + path;
    let res: Response;
    try {
      const timeout = AbortSignal.timeout(opts.timeoutMs ?? 30_000);
      res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout });
    } catch (err) {
      throw configError(`--tokenizer server: POST ${url} failed: ${(err as Error).cause ?? (err as Error).message}`);
    }
    const text = await res.text();
    if (!res.ok) {
      throw configError(
        `--tokenizer server: POST ${url} → HTTP ${res.status} ${text.slice(0, 160).replace(/\s+/g, ' ')}`,
        `the ${api} tokenize endpoint is missing or refused; pass --tokenizer PATH/tokenizer.json instead`,
      );
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw configError(`--tokenizer server: POST ${url} did not return JSON`);
    }
  };
  const model = opts.model;
  const fields = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
  const asCount = (v: unknown, path: string): number => {
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    if (Array.isArray(v)) return v.length;
    throw configError(`--tokenizer server: unexpected reply from ${base}${path}`, `is this a ${api} server?`);
  };
  const one = async (text: string): Promise<number> => {
    const path = ROUTES[api];
    if (api === 'vllm') return asCount(fields(await post(path, { ...(model ? { model } : {}), prompt: text })).count, path);
    if (api === 'tgi') return asCount(await post(path, { inputs: text }), path);
    return asCount(fields(await post(path, { content: text, add_special: true, parse_special: true })).tokens, path);
  };
  const count = async (texts: readonly string[]): Promise<number[]> => {
    if (api !== 'sglang') return sequential(texts, one);
    const reply = fields(await post(ROUTES.sglang, { ...(model ? { model } : {}), prompt: [...texts], add_special_tokens: true }));
    const counts = reply['count'];
    if (!Array.isArray(counts) || counts.length !== texts.length) throw configError(`--tokenizer server: unexpected reply from ${base}/v1/tokenize`);
    return counts.map((c) => asCount(c, ROUTES.sglang));
  };
  const chatOne = async (messages: readonly ChatMessage[]): Promise<number> => {
    if (api === 'vllm') {
      return asCount(fields(await post('/tokenize', { ...(model ? { model } : {}), messages, add_generation_prompt: true })).count, '/tokenize');
    }
    if (api === 'tgi') {
      return asCount(fields(await post('/chat_tokenize', { model: model ?? 'tgi', messages })).tokenize_response, '/chat_tokenize');
    }
    const rendered = fields(await post('/apply-template', { messages })).prompt;
    if (typeof rendered !== 'string') throw configError(`--tokenizer server: unexpected reply from ${base}/apply-template`);
    return asCount(fields(await post('/tokenize', { content: rendered, add_special: true, parse_special: true })).tokens, '/tokenize');
  };
  const approx = await loadApproxTokenizer();
  const probe = await count(['the']);
  const specialTokens = Math.max(0, (probe[0] ?? 1) - 1);
  const tokenizer: ServerTokenizer = {
    name: `server /tokenize (${api})`,
    exact: true,
    api,
    get requests() {
      return requests;
    },
    encode: approx.encode,
    decode: approx.decode,
    specialTokens,
    count,
    // SGLang's tokenize endpoint takes no messages: chat templates cannot be counted there.
    ...(api === 'sglang' ? {} : { countChat: (convs: readonly (readonly ChatMessage[])[]) => sequential(convs, chatOne) }),
  };
  return tokenizer;
}

async function sequential<T>(xs: readonly T[], f: (x: T) => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (const x of xs) out.push(await f(x));
  return out;
}

export function isServerTokenizer(t: Tokenizer): t is ServerTokenizer {
  return typeof (t as Partial<ServerTokenizer>).count === 'function' && 'api' in t;
}
