/** Helpers shared by the OpenAI-style routes of several engines. */
import { countChat, countPrompt, type PromptCount } from './filler.js';
import { asObj, bool, firstInt, int, type Obj } from './request.js';

export const SSE_DONE = 'data: [DONE]\n\n';

export function sse(payload: string): string {
  return 'data: ' + payload + '\n\n';
}

/** Common reading of an OpenAI completions/chat body. */
export interface OpenAiRequest {
  body: Obj;
  chat: boolean;
  model: string | undefined;
  prompt: PromptCount;
  requestedMax: number | undefined;
  stream: boolean;
  /** stream_options present (vLLM: include_usage then defaults to true). */
  streamOptions: Obj | undefined;
  includeUsage: boolean | undefined;
  ignoreEos: boolean;
  minTokens: number | undefined;
}

export function readOpenAi(raw: unknown, chat: boolean): OpenAiRequest | string {
  const body = asObj(raw);
  if (!body) return 'request body must be a JSON object';
  const prompt = chat ? countChat(body['messages']) : countPrompt(body['prompt']);
  const requestedMax = chat ? firstInt(body, 'max_completion_tokens', 'max_tokens') : int(body, 'max_tokens');
  const streamOptions = asObj(body['stream_options']);
  const minTokens = int(body, 'min_tokens');
  return {
    body,
    chat,
    model: typeof body['model'] === 'string' ? body['model'] : undefined,
    prompt,
    requestedMax,
    stream: bool(body, 'stream') === true,
    streamOptions,
    includeUsage: bool(streamOptions, 'include_usage'),
    ignoreEos: bool(body, 'ignore_eos') === true,
    minTokens: minTokens !== undefined && Number.isInteger(minTokens) && minTokens > 0 ? minTokens : undefined,
  };
}

/** 32 lowercase hex chars → short forms some engines use. */
export function shortHex(hex: string, n: number): string {
  return hex.slice(0, n);
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Deterministic alphanumeric id of length n from a hex seed (llama.cpp / lmdeploy shortuuid style). */
export function alnumId(hex: string, n: number): string {
  let s = '';
  let h = Number.parseInt(hex.slice(0, 8), 16) >>> 0;
  for (let i = 0; i < n; i++) {
    h = (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + 0x297a2d39 + i) >>> 0;
    s += ALNUM[h % ALNUM.length];
  }
  return s;
}
