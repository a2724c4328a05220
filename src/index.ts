/** @module inferbench — programmatic API: the same pieces the CLI uses. */
export { runBenchmark, type BenchmarkResult, type BenchmarkHooks } from './load/benchmark.js';
export { createHttpStageRunner, type HttpRunnerOptions } from './load/http-runner.js';
export { nextStage, sweepRates, type ProfileConfig, type ProfileName } from './load/profiles.js';
export type { StageSpec, StageResult, StageRunner } from './load/types.js';
export { createArrivalProcess, type ArrivalProcess } from './load/arrivals.js';
export { HttpTarget, type HttpTargetOptions } from './transport/http.js';
export { getDialect, dialects, detectEngine, listModels } from './dialects/index.js';
export type { RequestRecord } from './metrics/record.js';
export { summarizeStage, type StageSummary, type Slo } from './metrics/summary.js';
export { computeStats, type Stats } from './metrics/stats.js';
export { createFixedLengthWorkload, createLengthsWorkload } from './workload/synthetic.js';
export { createWorkload, type WorkloadSpec } from './workload/create.js';
export { loadApproxTokenizer, type Tokenizer } from './workload/tokenizer.js';
export { createVirtualStageRunner } from './sim/virtual-runner.js';
export { renderMarkdownReport, renderCsvReport, type RunSummaryDoc } from './report/run-summary.js';
// The one results schema (zod): validate a summary.json or a requests.jsonl line the way the store reads them.
export { requestRecordSchema, stageSummarySchema, runSummaryDocSchema, summaryFileSchema, manifestSchema, METRIC_NAMES, type MetricName } from './results/index.js';
