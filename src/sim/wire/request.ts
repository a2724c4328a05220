/** Reading request bodies: typed field access and the length checks every engine does. */

export type Obj = Record<string, unknown>;

export function asObj(v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** An integer field; null/absent ⇒ undefined; anything else non-integer ⇒ NaN (caller rejects). */
export function int(o: Obj | undefined, key: string): number | undefined {
  const v = o?.[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'number' && Number.isInteger(v) ? v : Number.NaN;
}

export function bool(o: Obj | undefined, key: string): boolean | undefined {
  const v = o?.[key];
  return typeof v === 'boolean' ? v : undefined;
}

export function str(o: Obj | undefined, key: string): string | undefined {
  const v = o?.[key];
  return typeof v === 'string' ? v : undefined;
}

/** First defined integer among keys. */
export function firstInt(o: Obj | undefined, ...keys: string[]): number | undefined {
  for (const k of keys) {
    const v = int(o, k);
    if (v !== undefined) return v;
  }
  return undefined;
}

export type LengthCheck =
  | { ok: true; maxTokens: number }
  | { ok: false; reason: 'prompt-too-long' | 'max-too-large' | 'bad-max'; promptTokens: number; maxTokens: number; limit: number };

/**
 * Resolve the generation cap: `requested` (undefined ⇒ `dflt`, where 'remaining' fills the context),
 * rejecting prompts that do not fit and caps that overflow max_model_len (vLLM/SGLang/TGI behaviour).
 * With `clamp` the cap is silently reduced to what fits (llama.cpp, Ollama).
 */
export function resolveMax(limit: number, promptTokens: number, requested: number | undefined, dflt: number | 'remaining', clamp = false): LengthCheck {
  const remaining = limit - promptTokens;
  if (requested !== undefined && (!Number.isInteger(requested) || requested < 1)) {
    return { ok: false, reason: 'bad-max', promptTokens, maxTokens: requested, limit };
  }
  if (remaining < 1) return { ok: false, reason: 'prompt-too-long', promptTokens, maxTokens: requested ?? 0, limit };
  const want = requested ?? (dflt === 'remaining' ? remaining : dflt);
  if (want > remaining) {
    if (clamp || requested === undefined) return { ok: true, maxTokens: remaining };
    return { ok: false, reason: 'max-too-large', promptTokens, maxTokens: want, limit };
  }
  return { ok: true, maxTokens: want };
}
