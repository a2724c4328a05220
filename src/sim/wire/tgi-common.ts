/** TGI constants and helpers shared by the native and OpenAI-style routes. */
import { inlineOutputText } from './filler.js';
import { json, type FinishReason, type GenIdentity, type GenTimings, type HttpReply } from './types.js';

export const TGI_VERSION = '3.3.6-dev0';
export const TGI_FINGERPRINT = `${TGI_VERSION}-native`;
export const TGI_EOS_TEXT = '<|eot_id|>';
export const TGI_EOS_ID = 128009;

export function tgiError(status: number, message: string, errorType: string): HttpReply {
  return json(status, JSON.stringify({ error: message, error_type: errorType }));
}

export { tgiLengthMessage, tgiResolveMax } from './length-errors.js';

export function tgiFinish(f: FinishReason): string {
  return f === 'length' ? 'length' : f === 'stop' ? 'eos_token' : 'length';
}


/** generated_text for `count` tokens ending with `finish` (the EOS special token is excluded). */
export function tgiGenerated(id: GenIdentity, count: number, finish: FinishReason): string {
  return inlineOutputText(id.offset, id.reasoning, count, finish);
}

export function tgiTimingHeaders(t: GenTimings, promptTokens: number, count: number): Record<string, string> {
  const ms = (a: number | undefined, b: number | undefined): string => String(Math.max(0, Math.round((b ?? t.nowMs) - (a ?? t.arrivalMs))));
  const inference = (t.nowMs - (t.prefillStartMs ?? t.arrivalMs));
  return {
    'x-compute-type': 'gpu+optimized',
    'x-compute-time': ms(t.prefillStartMs, t.nowMs),
    'x-compute-characters': '0',
    'x-total-time': ms(t.arrivalMs, t.nowMs),
    'x-validation-time': '0',
    'x-queue-time': ms(t.arrivalMs, t.prefillStartMs),
    'x-inference-time': String(Math.round(inference)),
    'x-time-per-token': String(count > 0 ? Math.round(inference / count) : 0),
    'x-prompt-tokens': String(promptTokens),
    'x-generated-tokens': String(count),
  };
}
