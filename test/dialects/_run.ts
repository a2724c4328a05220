import { readFileSync } from 'node:fs';
import { dialects } from '../../src/dialects/index.js';
import type { ApiName, GenerationRequest, UsageInfo } from '../../src/dialects/types.js';
import { pieces, split } from './_split.js';

export const fixtureDir = new URL('../fixtures/streams/', import.meta.url);

export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(name, fixtureDir)));
}

export function request(over: Partial<GenerationRequest> = {}): GenerationRequest {
  return { model: 'm', prompt: 'Hello', maxTokens: 3, forceLength: false, stream: true, ...over };
}

/** What a consumer of the parser would have gathered from one body. */
export interface Outcome {
  text: string;
  /** Sum of per-frame `tokens`, undefined when no frame carried any. */
  tokens?: number;
  /** Last usage seen. */
  usage?: UsageInfo;
  finishReason?: string;
  /** 'frame': a payload returned done; 'end': only parser.end() did; 'never': truncated. */
  done: 'frame' | 'end' | 'never';
  errors: { message: string; type?: string }[];
  /** Payloads seen after the first done (should be none, or a [DONE] after a finish). */
  afterDone: number;
}

export function run(api: ApiName, req: GenerationRequest, chunks: Uint8Array[]): Outcome {
  const dialect = dialects[api];
  const parser = dialect.createParser(req);
  const out: Outcome = { text: '', done: 'never', errors: [], afterDone: 0 };
  for (const { payload, field } of split(dialect.buildRequest(req).framing, chunks)) {
    if (out.done !== 'never') out.afterDone++;
    const ev = parser.frame(payload, field);
    if (ev === null) continue;
    if (ev.text !== undefined) out.text += ev.text;
    if (ev.tokens !== undefined) out.tokens = (out.tokens ?? 0) + ev.tokens;
    if (ev.usage !== undefined) out.usage = ev.usage;
    if (ev.finishReason !== undefined) out.finishReason = ev.finishReason;
    if (ev.error !== undefined) out.errors.push(ev.error);
    if (ev.done === true && out.done === 'never') out.done = 'frame';
  }
  if (out.done === 'never' && parser.end?.()?.done === true) out.done = 'end';
  return out;
}

/** The same body fed whole and in many awkward 1..7-byte slicings. */
export function runSliced(api: ApiName, req: GenerationRequest, bytes: Uint8Array): Outcome[] {
  const results = [run(api, req, [bytes])];
  for (let seed = 1; seed <= 25; seed++) results.push(run(api, req, pieces(bytes, seed, 1 + (seed % 7))));
  return results;
}
