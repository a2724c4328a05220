import type { StageSummary } from '../metrics/summary.js';
import { CHANCE_SHARED_TOKENS } from '../metrics/cache-chance.js';
import { sweepOrder } from './layouts.js';

const f = (v: number | undefined, d = 1): string => (v === undefined ? '—' : v.toFixed(d));

/**
 * Lines printed under a table for what the table's columns cannot show: token-count exactness,
 * multi-turn and cache effects, replay lag and goodput. Only lines that have data appear, rows in table order.
 */
export function findingLines(stages: readonly StageSummary[], opts: { goodput?: boolean } = {}): string[] {
  const out: string[] = [];
  let compared = 0;
  let mismatched = 0;
  let outputOff = 0;
  let ok = 0;
  for (const s of stages) {
    compared += s.metrics.promptTokenMismatch?.count ?? 0;
    mismatched += s.promptLengthMismatches;
    outputOff += s.outputLengthMismatches;
    ok += s.requests.ok;
  }
  if (compared > 0) {
    const worst = Math.max(...stages.map((s) => Math.max(Math.abs(s.metrics.promptTokenMismatch?.min ?? 0), Math.abs(s.metrics.promptTokenMismatch?.max ?? 0))));
    out.push(
      mismatched === 0
        ? `prompt lengths: all ${compared} server-counted prompts had exactly the length the client built`
        : `prompt lengths: ${compared - mismatched} of ${compared} matched the server's count exactly; the others were off by up to ${worst} token${worst === 1 ? '' : 's'} (pass --tokenizer for exact counts)`,
    );
  }
  if (outputOff > 0) {
    out.push(`output lengths: ${outputOff} of ${ok} successful requests did not generate the requested length (the server stopped on its own; see outputTokens in summary.json)`);
  }
  for (const s of [...stages].sort((a, b) => sweepOrder(a) - sweepOrder(b))) {
    const m = s.metrics;
    if (m.ttftFirstTurnMs && m.ttftLaterTurnMs) {
      out.push(
        `${s.label}: TTFT first turn mean ${f(m.ttftFirstTurnMs.mean)} ms (p99 ${f(m.ttftFirstTurnMs.p99)}), later turns mean ${f(m.ttftLaterTurnMs.mean)} ms (p99 ${f(m.ttftLaterTurnMs.p99)})`,
      );
    }
    if (s.sessions && s.sessions.count > 0) {
      const ss = s.sessions;
      const pctOf = (v: number | undefined): string | undefined => (v === undefined ? undefined : `${(100 * v).toFixed(0)}%`);
      const cache = [pctOf(ss.prefixCacheHitRateFirstTurn) && `first turns ${pctOf(ss.prefixCacheHitRateFirstTurn)}`, pctOf(ss.prefixCacheHitRateLaterTurns) && `later turns ${pctOf(ss.prefixCacheHitRateLaterTurns)}`].filter(Boolean);
      out.push(
        `${s.label}: ${ss.count} sessions, ${f(ss.meanTurns, 1)} turns each, first send → last reply p50 ${f(ss.durationMs.median / 1000, 2)} s (p99 ${f(ss.durationMs.p99 / 1000, 2)} s)${cache.length ? `; prompt tokens from the prefix cache: ${cache.join(', ')}` : ''}`,
      );
    }
    // Unintended hits are said louder by the row notes (‡); a server that reports zeros, or a shared first token
    // or two per prompt (chance), has nothing to say.
    if (m.cachedTokens && m.cachedTokens.count > 0 && m.cachedTokens.max > CHANCE_SHARED_TOKENS && !s.unintendedCache) {
      out.push(`${s.label}: the server reported cached prompt tokens on ${m.cachedTokens.count} requests, mean ${f(m.cachedTokens.mean)} per request`);
    }
    if (s.label.startsWith('replay') && m.timerLagMs) {
      out.push(`${s.label}: replay lag (send − trace time) p50 ${f(m.timerLagMs.median, 2)} ms, p99 ${f(m.timerLagMs.p99, 2)} ms, max ${f(m.timerLagMs.max, 2)} ms`);
    }
    // A capacity run's table has the SLO column already (each probe's attainment, pass or fail).
    if (s.goodput && opts.goodput !== false) {
      // A limit on a figure the row never measured (TTFT/ITL of non-streamed or one-token replies) is not checked.
      const limits = Object.entries(s.goodput.slo).filter(([, v]) => v !== undefined);
      const unmeasured = limits.filter(([k]) => !m[k as keyof typeof m]).map(([k]) => k.replace(/Ms$/, ''));
      const slo = limits.filter(([k]) => m[k as keyof typeof m]).map(([k, v]) => `${k.replace(/Ms$/, '')} ≤ ${v} ms`).join(', ');
      const share = s.requests.total > 0 ? (100 * s.goodput.good) / s.requests.total : 0;
      if (slo === '') out.push(`${s.label}: goodput not measured (${unmeasured.join(', ')} not measured for these requests)`);
      else out.push(`${s.label}: goodput ${f(s.goodput.requestsPerS, 2)} req/s (${s.goodput.good} of ${s.requests.total} requests, ${share.toFixed(0)}%, met ${slo}${unmeasured.length ? `; ${unmeasured.join(', ')} not measured, not checked` : ''})`);
    }
  }
  return out;
}
