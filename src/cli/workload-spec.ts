import type { RunOptions } from '../config/run-options.js';
import type { WorkloadSpecDoc } from '../report/run-summary.js';
import { parseLengthDist } from '../workload/lengths.js';
import { lengthDists } from '../runplan/workload-setup.js';

/**
 * summary.json `workloadSpec`: the workload the flags asked for, as fields (kind, length distributions,
 * tokenizer, dataset or trace, shared prefix, turns) beside the prose `workload`. Built after the workload was
 * made, so every length string here has already parsed.
 */
export function workloadSpecOf(opts: RunOptions, extra: { tokenizer?: string; chat?: boolean; forcedOutputLength?: boolean }): WorkloadSpecDoc {
  const w = opts.workload;
  const common = {
    ...(extra.tokenizer !== undefined ? { tokenizer: extra.tokenizer } : {}),
    ...(extra.chat !== undefined ? { chat: extra.chat } : {}),
    ...(extra.forcedOutputLength !== undefined ? { forcedOutputLength: extra.forcedOutputLength } : {}),
    stream: opts.stream,
    ...(opts.batchSize !== undefined ? { inputsPerRequest: opts.batchSize } : {}),
    ...(w.images ? { images: { ...w.images } } : {}),
    ...(w.prefixTokens !== undefined ? { sharedPrefix: { tokens: w.prefixTokens, groups: w.prefixGroups ?? 1 } } : {}),
  };
  if (opts.profile === 'grid') {
    return { kind: 'grid', inputLens: opts.inputLens ?? [], outputLens: opts.outputLens ?? [], numPrompts: opts.numPrompts, ...common };
  }
  if (w.trace) return { kind: 'trace', trace: { path: w.trace, ...(w.timeScale !== undefined ? { timeScale: w.timeScale } : {}) }, ...common };
  const { prompt, output } = lengthDists(opts);
  if (w.data) {
    return {
      kind: 'dataset',
      dataset: { path: w.data, ...(w.dataColumn ? { column: w.dataColumn } : {}), ...(opts.numPromptsGiven ? { numPrompts: opts.numPrompts } : {}) },
      // A dataset keeps its own output lengths unless --output-tokens or --output-dist overrides them.
      ...(w.outputTokensGiven || w.outputDist ? { outputTokens: output } : {}),
      ...common,
    };
  }
  const lengths = { promptTokens: prompt, outputTokens: output, ...(w.scenario ? { scenario: w.scenario } : {}) };
  if (w.turns) {
    return {
      kind: 'conversation',
      ...lengths,
      turns: parseLengthDist(w.turns, '--turns'),
      ...(w.thinkTime ? { thinkTimeMs: parseLengthDist(w.thinkTime, '--think-time') } : {}),
      ...common,
    };
  }
  return { kind: 'synthetic', ...lengths, ...common };
}
