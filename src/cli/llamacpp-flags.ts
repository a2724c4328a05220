/** `--parallel N` and `--ctx-size N` (llama-server's own flag names): the slots and total context of a llama.cpp deployment. */
import { configError } from '../core/errors.js';
import { parseNumber, type Problems } from '../config/parse.js';
import type { SimEngineOptions } from '../sim/create.js';

export type SlotOptions = Pick<SimEngineOptions, 'maxNumSeqs' | 'ctxSize'>;

/**
 * Reads the two flags (one line, exit 2, for a value that is not a positive whole number). `--parallel` is the batch
 * limit of any engine (llama.cpp calls its sequences slots); `sim`'s `--max-num-seqs` says the same, so not both.
 */
export function readSlotFlags(flags: Record<string, unknown>): SlotOptions {
  const p: Problems = [];
  const str = (k: string): string | undefined => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined);
  const parallel = parseNumber('--parallel', str('parallel'), p, { integer: true, positive: true });
  const ctxSize = parseNumber('--ctx-size', str('ctxSize'), p, { integer: true, positive: true });
  if (parallel !== undefined && str('maxNumSeqs') !== undefined) p.push('--parallel and --max-num-seqs both set the batch limit; give one of them');
  if (p.length > 0) throw configError(p.join('; '));
  return { ...(parallel !== undefined ? { maxNumSeqs: parallel } : {}), ...(ctxSize !== undefined ? { ctxSize } : {}) };
}
