/**
 * Each engine's answer to a request that does not fit its context, in one place: the HTTP routes write
 * these messages, and `predict` (virtual time, no HTTP) fails such requests with the same status and
 * message through `admitRequest`. No tokenizer import here, so predict stays light.
 */
import { resolveMax, type LengthCheck } from './request.js';
import type { SimEngineKind } from './types.js';

export type LengthFailure = Exclude<LengthCheck, { ok: true }>;

/** What the engine's front end makes of prompt + max_tokens: run it (lengths possibly clamped) or reject it. */
export type Admission =
  | { ok: true; promptTokens: number; maxTokens: number }
  | { ok: false; status: number; message: string };

/** vLLM ≥ 0.10 OpenAI server (serving.py `_validate_input`). */
export function vllmLengthMessage(c: LengthFailure): string {
  if (c.reason === 'bad-max') return `max_tokens must be at least 1, got ${c.maxTokens}.`;
  if (c.reason === 'prompt-too-long') {
    return `This model's maximum context length is ${c.limit} tokens. However, your request has ${c.promptTokens} input tokens. Please reduce the length of the input messages.`;
  }
  return `'max_tokens' or 'max_completion_tokens' is too large: ${c.maxTokens}. This model's maximum context length is ${c.limit} tokens and your request has ${c.promptTokens} input tokens (${c.maxTokens} > ${c.limit} - ${c.promptTokens}).`;
}

export function sglangLengthMessage(c: LengthFailure): string {
  if (c.reason === 'bad-max') return 'max_tokens must be positive.';
  if (c.reason === 'prompt-too-long') return `The input (${c.promptTokens} tokens) is longer than the model's context length (${c.limit} tokens).`;
  return `Requested token count exceeds the model's maximum context length of ${c.limit} tokens. You requested a total of ${c.promptTokens + c.maxTokens} tokens: ${c.promptTokens} tokens from the input messages and ${c.maxTokens} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`;
}

/** TGI router validation errors (router/src/validation.rs); `limit` is max_total_tokens. */
export function tgiLengthMessage(c: LengthFailure): string {
  if (c.reason === 'bad-max') return 'Input validation error: `max_new_tokens` must be strictly positive';
  if (c.reason === 'prompt-too-long') return `Input validation error: \`inputs\` must have less than ${c.limit - 1} tokens. Given: ${c.promptTokens}`;
  return `Input validation error: \`inputs\` tokens + \`max_new_tokens\` must be <= ${c.limit}. Given: ${c.promptTokens} \`inputs\` tokens and ${c.maxTokens} \`max_new_tokens\``;
}

/** TGI 3 generates max_new_tokens in segments of DEFAULT_GENERATION_LENGTH and validates the first one. */
export const TGI_GENERATION_SEGMENT = 1024;

/**
 * TGI 3 `validate_input`: prompt + min(max_new_tokens, 1024) must be ≤ max_total_tokens (checked first),
 * then the prompt ≤ max_input_tokens = max_total_tokens − 1. Without max_new_tokens it fills the context.
 */
export function tgiResolveMax(maxTotal: number, promptTokens: number, requested: number | undefined): LengthCheck {
  if (requested !== undefined && (!Number.isInteger(requested) || requested < 1)) {
    return { ok: false, reason: 'bad-max', promptTokens, maxTokens: requested, limit: maxTotal };
  }
  const want = requested ?? Math.max(0, maxTotal - promptTokens);
  const segment = Math.min(want, TGI_GENERATION_SEGMENT);
  if (promptTokens + segment > maxTotal) return { ok: false, reason: 'max-too-large', promptTokens, maxTokens: segment, limit: maxTotal };
  if (promptTokens > maxTotal - 1) return { ok: false, reason: 'prompt-too-long', promptTokens, maxTokens: want, limit: maxTotal };
  return { ok: true, maxTokens: want };
}

export const LLAMA_CONTEXT_MESSAGE = 'the request exceeds the available context size, try increasing it';

export function lmdeployLengthMessage(promptTokens: number, maxTokens: number, sessionLen: number): string {
  return `The input token length ${promptTokens} plus max_tokens ${maxTokens} exceeds the session length ${sessionLen}.`;
}

export function tritonLengthMessage(promptTokens: number, maxTokens: number, maxSeqLen: number): string {
  return `Prompt length (${promptTokens}) plus max_tokens (${maxTokens}) exceeds the maximum sequence length (${maxSeqLen})`;
}

/**
 * How the route a benchmark client uses for `kind` (completions for vLLM/SGLang/llama.cpp, chat for lmdeploy,
 * native for TGI/Triton/Ollama/vLLM 0.2) answers `promptTokens` with an explicit `maxTokens` when the
 * context is `limit` tokens.
 */
export function admitRequest(kind: SimEngineKind, limit: number, promptTokens: number, maxTokens: number): Admission {
  const fail = (status: number, message: string): Admission => ({ ok: false, status, message });
  switch (kind) {
    case 'tgi': {
      const c = tgiResolveMax(limit, promptTokens, maxTokens);
      return c.ok ? { ok: true, promptTokens, maxTokens: c.maxTokens } : fail(422, tgiLengthMessage(c));
    }
    case 'ollama': {
      // Ollama truncates the prompt to the context and clamps num_predict: nothing is rejected.
      const prompt = Math.min(promptTokens, limit - 1);
      return { ok: true, promptTokens: prompt, maxTokens: Math.min(maxTokens, limit - prompt) };
    }
    case 'llamacpp': {
      const c = resolveMax(limit, promptTokens, maxTokens, 'remaining', true);
      return c.ok ? { ok: true, promptTokens, maxTokens: c.maxTokens } : fail(400, LLAMA_CONTEXT_MESSAGE);
    }
    case 'vllm-legacy': {
      // vLLM 0.2 caps the output at the context; its /generate fails an over-long prompt with a bare 500.
      const c = resolveMax(limit, promptTokens, maxTokens, maxTokens, true);
      return c.ok ? { ok: true, promptTokens, maxTokens: c.maxTokens } : fail(500, 'Internal Server Error');
    }
    default: {
      const c = resolveMax(limit, promptTokens, maxTokens, maxTokens);
      if (c.ok) return { ok: true, promptTokens, maxTokens: c.maxTokens };
      if (kind === 'vllm') return fail(400, vllmLengthMessage(c));
      if (kind === 'sglang') return fail(400, sglangLengthMessage(c));
      if (kind === 'lmdeploy') return fail(400, lmdeployLengthMessage(promptTokens, c.maxTokens, limit));
      return fail(400, tritonLengthMessage(promptTokens, maxTokens, limit));
    }
  }
}
