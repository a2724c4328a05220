/** Checks of the requested lengths against the simulated engine's context, before `predict` or an embedded-sim `run`. */
import type { RunOptions } from '../config/run-options.js';
import { configError } from '../core/errors.js';
import type { ResolvedSimEngine } from '../sim/create.js';
import { checkRequestFits, kvCapacityWarning, type RequestShape } from '../sim/limits.js';
import { maxLength, type LengthDist } from '../workload/lengths.js';
import { lengthDists } from '../runplan/workload-setup.js';

/** A distribution's typical largest request: its bound, or its mean when the tail is unbounded. */
function representative(d: LengthDist): number {
  const max = maxLength(d);
  if (Number.isFinite(max)) return max;
  return d.kind === 'normal' || d.kind === 'exponential' ? Math.round(d.mean) : max;
}

/**
 * The request shapes the flags ask for: every grid cell, or the largest prompt and output of the length
 * distributions. Datasets, traces and conversations set lengths per request: the engine fails those
 * that do not fit, as a real one does.
 */
export function requestedShapes(opts: RunOptions): RequestShape[] {
  const w = opts.workload;
  if (opts.profile === 'grid' && opts.inputLens && opts.outputLens) {
    const outs = opts.outputLens;
    return opts.inputLens.flatMap((p) => outs.map((o) => ({ promptTokens: p, outputTokens: o, flags: '--input-lens/--output-lens' })));
  }
  if (w.data || w.trace || w.turns) return [];
  const { prompt, output } = lengthDists(opts);
  const flags = w.scenario ? '--scenario' : `${w.promptDist ? '--prompt-dist' : '--prompt-tokens'}/${w.outputDist ? '--output-dist' : '--output-tokens'}`;
  return [{ promptTokens: representative(prompt), outputTokens: representative(output), flags }];
}

/** Throws (exit 2) if the engine would refuse every request of a shape; returns warning lines to print. */
export function checkSimLimits(opts: RunOptions, resolved: ResolvedSimEngine): string[] {
  // Embeddings generate nothing: each input alone must fit the context (vLLM's pooling check).
  if (opts.batchSize !== undefined) checkInputsFit(opts, resolved);
  else for (const shape of requestedShapes(opts)) checkRequestFits(resolved, shape);
  const warning = kvCapacityWarning(resolved);
  return warning ? [warning] : [];
}

function checkInputsFit(opts: RunOptions, resolved: ResolvedSimEngine): void {
  const w = opts.workload;
  if (w.data || w.trace) return;
  const input = representative(lengthDists(opts).prompt);
  const d = resolved.description;
  if (input <= d.maxModelLen) return;
  throw configError(
    `embeddings inputs of ${input} tokens do not fit the ${d.maxModelLen}-token context of ${d.model} on ${resolved.profile.name}: every request would fail with HTTP 400`,
    `lower ${w.promptDist ? '--prompt-dist' : '--prompt-tokens'} to ${d.maxModelLen} or less`,
  );
}
