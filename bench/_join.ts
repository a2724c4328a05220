/**
 * Join client records with the sim's ground truth (simulator.md §6.6). Truth times are mapped onto the
 * client's clock; the "true" TTFT/ITL/E2E are the server's write times anchored at the client's own send
 * time, so each error is the client's alone: per token ε = client receive − server write.
 */
import type { RequestRecord } from '../src/metrics/record.js';
import type { TruthRecord } from '../src/sim/server/index.js';

export interface JoinResult {
  joined: number;
  /** Records with no truth (id missing or evicted) or truth not completed. */
  unjoined: number;
  /** |client − truth| per request. */
  ttftErr: number[];
  itlErr: number[];
  e2eErr: number[];
  /** Signed per-token client receive − server write. */
  tokenEps: number[];
  /** Signed server write − planned, per token (the sim's own lateness, not the client's). */
  serverLate: number[];
  /** Client send → sim fully parsed the request. */
  sendToArrival: number[];
  /** Requests whose client count equals the tokens the server wrote (and the requested count). */
  tokensExact: number;
  tokensWrong: Array<{ id: string; client: number; server: number; requested: number; chunks: number }>;
}

export function joinWithTruth(records: readonly RequestRecord[], truth: ReadonlyMap<number, TruthRecord>, toClientMs: number): JoinResult {
  const out: JoinResult = { joined: 0, unjoined: 0, ttftErr: [], itlErr: [], e2eErr: [], tokenEps: [], serverLate: [], sendToArrival: [], tokensExact: 0, tokensWrong: [] };
  for (const r of records) {
    const t = r.serverRequestId !== undefined ? truth.get(Number(r.serverRequestId)) : undefined;
    if (r.status !== 'ok' || !t || t.outcome !== 'completed' || r.firstTokenAtMs === undefined) {
      out.unjoined++;
      continue;
    }
    out.joined++;
    const n = t.writtenMs.length;
    if (r.outputTokens === n && n === r.requestedOutputTokens && r.chunks === n) out.tokensExact++;
    else out.tokensWrong.push({ id: r.serverRequestId as string, client: r.outputTokens, server: n, requested: r.requestedOutputTokens, chunks: r.chunks });
    const w0 = (t.writtenMs[0] as number) + toClientMs;
    const wLast = (t.writtenMs[n - 1] as number) + toClientMs;
    out.sendToArrival.push(t.arrivalMs + toClientMs - r.sentAtMs);
    out.ttftErr.push(Math.abs(r.firstTokenAtMs - w0));
    out.e2eErr.push(Math.abs(r.endAtMs - wLast));
    if (r.itlMs !== undefined && n > 1) out.itlErr.push(Math.abs(r.itlMs - (wLast - w0) / (n - 1)));
    for (let i = 0; i < n; i++) out.serverLate.push((t.writtenMs[i] as number) - (t.plannedMs[i] as number));
    // one frame per token from the sim, so chunk i is token i
    if (r.chunks === n) {
      let at = r.firstTokenAtMs;
      for (let i = 0; i < n; i++) {
        if (i > 0) at += r.chunkGapsMs[i - 1] as number;
        out.tokenEps.push(at - ((t.writtenMs[i] as number) + toClientMs));
      }
    }
  }
  return out;
}
