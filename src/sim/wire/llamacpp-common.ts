/** llama.cpp helpers shared by the native and OpenAI-style routes. */
import { json, type GenTimings, type HttpReply, type WireContext } from './types.js';

export const LLAMA_BUILD = 'b6100-1a2b3c4d';

/** llama.cpp's error envelope: key order code, message, type (+ context-size details). */
export function llamaError(status: number, message: string, type: string, extra?: Record<string, number>): HttpReply {
  return json(status, JSON.stringify({ error: { code: status, message, type, ...extra } }), { 'content-type': 'application/json; charset=utf-8' });
}

/** The model name llama.cpp derives from the GGUF file name (no org prefix). */
export function llamaModelName(ctx: WireContext): string {
  const base = ctx.model.split('/').pop() ?? ctx.model;
  return base;
}

export function timingsJson(t: GenTimings, promptTokens: number, n: number): string {
  const start = t.prefillStartMs ?? t.arrivalMs;
  const end = t.prefillEndMs ?? start;
  const promptMs = Math.max(1e-3, end - start);
  const predictedMs = Math.max(1e-3, t.nowMs - end);
  return JSON.stringify({
    cache_n: 0,
    prompt_n: promptTokens,
    prompt_ms: promptMs,
    prompt_per_token_ms: promptMs / Math.max(1, promptTokens),
    prompt_per_second: (promptTokens * 1000) / promptMs,
    predicted_n: n,
    predicted_ms: predictedMs,
    predicted_per_token_ms: predictedMs / Math.max(1, n),
    predicted_per_second: (n * 1000) / predictedMs,
  });
}
