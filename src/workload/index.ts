/** @module workload — tokenizers, exact-length prompts, length distributions, data files, traces, conversations. */
export type { ConversationTurn, ConversationWorkload, Workload, WorkItem } from './types.js';
export { APPROX_TOKENIZER_WARNING, countPromptTokens, loadApproxTokenizer, type Tokenizer } from './tokenizer.js';
export { loadHfTokenizer } from './hf-tokenizer.js';
export {
  createServerTokenizer,
  isServerTokenizer,
  type ServerTokenizer,
  type ServerTokenizerOptions,
  type TokenizeApi,
} from './server-tokenizer.js';
export {
  describeLength,
  maxLength,
  parseLengthDist,
  parseScenario,
  sampleLength,
  type LengthDist,
  type Scenario,
} from './lengths.js';
export { loadDataset, type Dataset, type DatasetEntry, type DatasetFormat, type DatasetOptions } from './dataset.js';
export { DEFAULT_DATASET_OUTPUT_TOKENS, type DatasetSpec } from './dataset-workload.js';
export { loadTrace, parseTimestamp, type TraceEntry, type TraceOptions } from './trace.js';
export { appendReply, buildTurnMessages, isConversationWorkload, type ConversationPlan } from './conversation.js';
export { createWorkload, describeWorkload, type PrefixSpec, type WorkloadDeps, type WorkloadSpec } from './create.js';
export { createFixedLengthWorkload, createLengthsWorkload } from './synthetic.js';
export { parseCsv, type CsvRecord } from './csv.js';
