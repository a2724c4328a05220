/**
 * The per-request metrics a row summarizes (design.md §2; names are part of the product: never reuse one for another
 * quantity). The one list: summaries compute these, the schema reads these, report columns, csv and importers name
 * their metrics from it. Units are in the names.
 */
export const METRIC_NAMES = [
  'ttftMs',
  'itlMs',
  'e2eMs',
  'queuedE2eMs',
  'latencyPerTokenMs',
  'latencyPerOutputTokenMs',
  /** The raw gaps between content chunks ("chunk gap"; vLLM's and SGLang's ITL), never reported as ITL. */
  'chunkGapMs',
  'dispatchLagMs',
  'timerLagMs',
  'clientQueueMs',
  'connectWaitMs',
  'promptTokens',
  'outputTokens',
  /** Server-reported minus client-built prompt tokens (whole prompts with a server count). */
  'promptTokenMismatch',
  'ttftFirstTurnMs',
  'ttftLaterTurnMs',
  'cachedTokens',
  'tokensPerChunk',
  'ttfoMs',
  'reasoningTokens',
  'answerItlMs',
  'imageTokens',
] as const;

export type MetricName = (typeof METRIC_NAMES)[number];

const KNOWN = new Set<string>(METRIC_NAMES);

export function isMetricName(name: string): name is MetricName {
  return KNOWN.has(name);
}
