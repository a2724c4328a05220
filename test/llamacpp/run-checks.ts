/** Checks on a run folder that need more than one row or the server's side: backlog and cache hits. */
import type { RequestRecord } from '../../src/metrics/record.js';
import type { ParsedSummary } from '../../src/store/schema.js';

/** TTFT of the first request sent in each row (stage index → ms). */
export function firstTtftByStage(records: RequestRecord[]): Map<number, number> {
  const first = new Map<number, RequestRecord>();
  for (const r of records) {
    const f = first.get(r.stage);
    if (f === undefined || r.sentAtMs < f.sentAtMs) first.set(r.stage, r);
  }
  return new Map([...first].flatMap(([stage, r]) => (r.ttftMs !== undefined ? [[stage, r.ttftMs] as [number, number]] : [])));
}

export interface BacklogReport {
  /** Requests of a row still open when a later row sent its first request. */
  lateRequests: Array<{ id: number; row: string; endedAfterRowStart: string; byMs: number }>;
  /** Rows (not bursts) whose first request waited far longer than on an idle server (work left over on the server). */
  slowFirstRequests: Array<{ row: string; firstTtftMs: number; idleBoundMs: number }>;
  details: string[];
}

/**
 * A row inherits backlog when requests of an earlier row are still open as it starts (client side) or when
 * the server is still busy with them (its first request then waits for a slot: far above the TTFT of an idle
 * server). Idle bound: `slots` prompts processed together, each as slow as the slowest synchronous one, +20 ms.
 */
export function backlogIntoNextRow(records: RequestRecord[], summary: ParsedSummary, slots = 4): BacklogReport {
  const stages = [...summary.stages].sort((a, b) => a.index - b.index);
  const label = new Map(stages.map((s) => [s.index, s.label]));
  const sync = stages.find((s) => s.label === 'synchronous');
  const syncMax = sync?.metrics['ttftMs']?.max ?? Number.NaN;
  const idleBoundMs = slots * syncMax + 20;
  const firstSent = new Map<number, number>();
  for (const r of records) firstSent.set(r.stage, Math.min(firstSent.get(r.stage) ?? Infinity, r.sentAtMs));
  const report: BacklogReport = { lateRequests: [], slowFirstRequests: [], details: [] };
  for (const r of records) {
    for (const s of stages) {
      const start = firstSent.get(s.index);
      if (s.index <= r.stage || start === undefined || r.endAtMs <= start) continue;
      report.lateRequests.push({ id: r.id, row: label.get(r.stage) ?? String(r.stage), endedAfterRowStart: s.label, byMs: r.endAtMs - start });
      break;
    }
  }
  const firstTtft = firstTtftByStage(records);
  for (const s of stages) {
    const t = firstTtft.get(s.index);
    // A throughput row opens with a burst larger than the slots: its first request may queue behind its own row.
    if (t !== undefined && s.kind !== 'burst' && s.label !== 'synchronous' && t > idleBoundMs) {
      report.slowFirstRequests.push({ row: s.label, firstTtftMs: Math.round(t), idleBoundMs: Math.round(idleBoundMs) });
    }
  }
  report.details.push(
    `idle bound for a row's first TTFT: ${idleBoundMs.toFixed(1)} ms (${slots} × synchronous max ${syncMax.toFixed(1)} ms + 20)`,
    `requests still open when a later row started: ${report.lateRequests.length}; rows whose first request waited beyond the bound: ${report.slowFirstRequests.length}`,
  );
  return report;
}

export interface CacheReport {
  /** Successful requests that report the server's cached prompt tokens. */
  withCacheField: number;
  clientHits: Array<{ id: number; row: number; cachedTokens: number; promptTokens: number }>;
}

/** Requests the server says it served partly from its prompt cache (usage.prompt_tokens_details.cached_tokens). */
export function cacheHits(records: RequestRecord[]): CacheReport {
  const ok = records.filter((r) => r.status === 'ok' && r.cachedTokens !== undefined);
  return {
    withCacheField: ok.length,
    clientHits: ok
      .filter((r) => (r.cachedTokens ?? 0) > 0)
      .map((r) => ({ id: r.id, row: r.stage, cachedTokens: r.cachedTokens ?? 0, promptTokens: r.promptTokens })),
  };
}
