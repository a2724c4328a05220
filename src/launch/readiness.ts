/**
 * When a launched server is ready: it answers its health/model route (engine detection, dialects/detect.ts, which
 * also names its API and model) AND a one-token request succeeds. Loading servers refuse connections, answer 503 or
 * list no model yet; each such answer is "not yet", remembered so a timeout can say what the server last said.
 */
import { detectEngine, type DetectedEngine } from '../dialects/detect.js';
import { getDialect } from '../dialects/index.js';
import type { ApiName } from '../dialects/types.js';

export interface ReadyAnswer {
  /** Latency of the first one-token request that succeeded: the cold server's first answer. */
  firstRequestMs: number;
  api: string;
  model: string;
  engine?: string;
  engineVersion?: string;
}

export interface ReadinessProbe {
  url: string;
  /** The API to speak (default: what detection finds). */
  api?: string;
  model?: string;
  apiKey?: string;
}

/** One attempt: the answer when ready, else a short reason why not (yet). */
export async function probeReady(p: ReadinessProbe, requestTimeoutMs: number): Promise<ReadyAnswer | { notReady: string }> {
  let found: DetectedEngine;
  try {
    found = await detectEngine(p.url, { timeoutMs: 2000, ...(p.apiKey !== undefined ? { apiKey: p.apiKey } : {}) });
  } catch (err) {
    return { notReady: err instanceof Error ? err.message : String(err) };
  }
  const api = p.api ?? found.api;
  const model = p.model ?? found.model ?? found.models[0] ?? 'served model';
  const dialect = getDialect(api as ApiName);
  const plan = dialect.buildRequest({ model, prompt: 'Hello', maxTokens: 1, forceLength: false, stream: false });
  const headers: Record<string, string> = { ...plan.headers };
  if (p.apiKey !== undefined) headers['authorization'] = `Bearer ${p.apiKey}`;
  const t0 = performance.now();
  try {
    const res = await fetch(new URL(plan.path, p.url), {
      method: plan.method,
      headers,
      ...(plan.method === 'POST' ? { body: plan.body } : {}),
      signal: AbortSignal.timeout(Math.round(requestTimeoutMs)),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (!res.ok) return { notReady: `one-token request: HTTP ${res.status} ${dialect.errorMessage(res.status, text)}` };
    return {
      firstRequestMs: ms,
      api,
      model,
      engine: found.engine,
      ...(found.version !== undefined ? { engineVersion: found.version } : {}),
    };
  } catch (err) {
    return { notReady: `one-token request: ${err instanceof Error ? err.message : String(err)}` };
  }
}
