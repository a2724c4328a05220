import type { StageSummary } from '../metrics/summary.js';
import { MIN_PERCENTILE_SAMPLES } from '../metrics/summary.js';
import { capMismatch } from '../metrics/cap-check.js';
import { noneFinished, sweepOrder } from './layouts.js';
import { interruptedNote } from './row-status.js';
import { replicaNoteLines } from './replica-lines.js';
import { measuredEnergyLine } from './energy-notes.js';
import { DEFAULT_EXTEND_FACTOR } from '../load/window.js';

const f2 = (n: number): string => n.toFixed(2);

/**
 * A row whose failures reach this share of its finished requests (failed / (ok + failed); cut requests apart) gets
 * a WARNING line: its figures describe only the requests that succeeded. The exit status is not changed by it (an
 * exit of 1 is a run that failed or a threshold the user set: design.md §exit codes).
 */
export const FAILURE_WARNING_SHARE = 0.05;

/** "WARNING: 29% of requests failed (6 of 21) in constant@4.00 req/s; its figures describe the 71% that succeeded". */
export function failureWarningLine(rows: readonly StageSummary[]): string | undefined {
  const high = rows.filter((s) => s.requests.ok > 0 && s.failureShare >= FAILURE_WARNING_SHARE);
  if (high.length === 0) return undefined;
  const pct = (x: number): string => `${Math.round(100 * x)}%`;
  const one = (s: StageSummary): string => `${pct(s.failureShare)} of requests failed (${s.requests.errors} of ${s.requests.ok + s.requests.errors}) in ${s.label}`;
  if (high.length === 1) {
    const s = high[0] as StageSummary;
    return `WARNING: ${one(s)}; its figures describe the ${pct(1 - s.failureShare)} that succeeded (see the Failed column)`;
  }
  return `WARNING: ${high.map(one).join('; ')} — each row's figures describe only its requests that succeeded (see the Failed column)`;
}

/**
 * One row of the "too few requests" note: what its window held, and the --max-seconds that would hold enough —
 * with how long windows then stretch, since the window it had was already longer than --max-seconds (kept open
 * extendFactor × for them: "--max-seconds 11" after a 15.7-s window read as a contradiction without it).
 */
function fewRequestsText(s: StageSummary, few: NonNullable<StageSummary['fewRequests']>): string {
  const window = s.durationS > 0 ? ` in its ${s.durationS.toFixed(1)}-s window (±${f2(1 / s.durationS)} req/s per request)` : '';
  const sized = few.sizedLimitS !== undefined ? `, ${few.min} at its rate taking longer than the ${few.sizedLimitS} s a sweep keeps a window open for them` : '';
  const stretch = few.suggestedMaxSeconds * (few.extendFactor ?? DEFAULT_EXTEND_FACTOR);
  const fix = few.suggestedMaxSeconds > 0 ? `: --max-seconds ${few.suggestedMaxSeconds} would hold ${few.min} (windows then stretch up to ${stretch} s)` : '';
  return `${s.label} held ${few.held} requests (min ${few.min})${window}${sized}${fix}`;
}

/**
 * Lines under a table about its rows: what each mark means and which rows carry it and why (overload, unintended
 * cache hits, a busy server at the start, figures that may not be steady), rows that stopped early or have no
 * figures, and the waits for an idle server between rows. Rows in table order.
 */
export function rowNoteLines(stages: readonly StageSummary[]): string[] {
  const rows = [...stages].sort((a, b) => sweepOrder(a) - sweepOrder(b));
  const out: string[] = [];
  // Rows whose intervals were dropped (identical repeats of a simulation, cli/run-outcome.ts) show no ±: no note either.
  const repeated = rows.find((s) => s.intervals !== undefined && ((s.repeats?.length ?? 0) > 1 || Object.values(s.intervals).some((c) => c.n > 1)));
  if (repeated) {
    const n = repeated.repeats?.length ?? Object.values(repeated.intervals ?? {})[0]?.n ?? 0;
    out.push(`± 95% interval (Student t, ${n - 1} degrees of freedom) of the mean over ${n} runs of each row; figures are the means of the runs' figures, each run is kept in summary.json (stages[].repeats)`);
  }
  const failing = failureWarningLine(rows);
  if (failing) out.push(failing);
  const overloaded = rows.filter((s) => s.belowTarget);
  if (overloaded.length > 0) {
    out.push(`\\* overloaded (did not keep up with its target rate): ${overloaded.map((s) => `${s.label} — ${s.overload ?? 'completed under 90% of the target rate'}`).join('; ')}`);
  }
  const steady = rows.filter((s) => s.steadyState !== undefined);
  if (steady.length > 0) {
    const f = (v: number | undefined): string => (v === undefined ? '—' : v.toFixed(2));
    out.push(`steady state (the longest stretch with requests in flight within 20% of their median, beside each row's own window): ${steady.map((s) => {
      const st = s.steadyState;
      if (!st) return `${s.label} none (in flight never held steady for a quarter of the window)`;
      return `${s.label} ${f(st.lengthS)} s from ${f(st.startS)} s at ${f(st.inFlightMedian)} in flight: ${f(st.requestThroughput)} req/s, ${f(st.outputTokenThroughput)} tok/s, TTFT p50 ${f(st.ttftMs?.median)} p99 ${f(st.ttftMs?.p99)} ms, ITL p50 ${f(st.itlMs?.median)} ms`;
    }).join('; ')}`);
  }
  const predicted = rows.filter((s) => s.energy?.source === 'simulator');
  if (predicted.length > 0) {
    out.push(`energy (the simulator's power model, docs/energy.md): ${predicted.map((s) => {
      const e = s.energy as NonNullable<StageSummary['energy']>;
      return `${s.label} ${e.joulesPerOutputToken !== undefined ? `${e.joulesPerOutputToken.toFixed(3)} J/token` : '— J/token'} at ${e.avgWatts.toFixed(0)} W`;
    }).join('; ')}`);
  }
  const measured = measuredEnergyLine(rows);
  if (measured) out.push(measured);
  const spec = rows.filter((s) => s.server?.specDecode);
  if (spec.length > 0) {
    out.push(`speculative decoding (the server's counters over each row): ${spec.map((s) => {
      const d = s.server?.specDecode as NonNullable<NonNullable<StageSummary['server']>['specDecode']>;
      return `${s.label} ${d.acceptedTokens} of ${d.draftTokens} draft tokens accepted (${(100 * d.acceptanceRate).toFixed(1)}%)`;
    }).join('; ')}`);
  }
  const perRequest = rows.filter((s) => s.specAcceptLength);
  if (perRequest.length > 0) {
    out.push(`speculative decoding (the server's per-request verify passes): ${perRequest.map((s) => {
      const a = s.specAcceptLength as NonNullable<StageSummary['specAcceptLength']>;
      return `${s.label} ${a.tokensPerVerify.toFixed(2)} tokens per verify pass over ${a.requests} requests`;
    }).join('; ')}`);
  }
  const imaged = rows.filter((s) => s.metrics.imageTokens);
  if (imaged.length > 0) {
    out.push(`image tokens per request (derived: the server's prompt tokens − the client's count of the text): ${imaged.map((s) => `${s.label} mean ${s.metrics.imageTokens?.mean.toFixed(1)}, min ${s.metrics.imageTokens?.min}, max ${s.metrics.imageTokens?.max}`).join('; ')}`);
  }
  const multi = rows.filter((s) => (s.metrics.tokensPerChunk?.mean ?? 1) > 1.05);
  if (multi.length > 0) {
    out.push(`several tokens per streamed chunk (speculative decoding, or a server that batches its stream; ITL is per token, chunk gaps per chunk): ${multi.map((s) => `${s.label} mean ${s.metrics.tokensPerChunk?.mean.toFixed(2)}, p90 ${s.metrics.tokensPerChunk?.p90.toFixed(2)}`).join('; ')}`);
  }
  const cached = rows.filter((s) => s.unintendedCache);
  if (cached.length > 0) {
    const list = cached.map((s) => {
      const c = s.unintendedCache as NonNullable<StageSummary['unintendedCache']>;
      return c.source === 'server-metrics'
        ? `${s.label} (${(100 * c.shareOfPromptTokens).toFixed(0)}% of prompt tokens by the server's /metrics)`
        : `${s.label} (${c.requests} requests, mean ${c.meanCachedTokens.toFixed(0)} cached tokens, ${(100 * c.shareOfPromptTokens).toFixed(0)}% of prompt tokens)`;
    });
    out.push(`‡ WARNING: the server answered from its prefix cache although every prompt was unique at its start — TTFT is lower than for new prompts (a --resume sends none of the prompts its run sent before: has the server served this --seed's prompts in an earlier run? restart it or pass another --seed): ${list.join('; ')}`);
  }
  out.push(...replicaNoteLines(rows));
  const busy = rows.filter((s) => s.idleWait && !s.idleWait.idle);
  if (busy.length > 0) {
    out.push(`§ started on a busy server (still busy after waiting): ${busy.map((s) => `${s.label} (waited ${s.idleWait?.waitedS.toFixed(1)} s, ${s.idleWait?.method})`).join('; ')}`);
  }
  for (const s of rows) {
    for (const w of s.steadyWarnings ?? []) {
      if (w.includes('fewer than')) continue;
      out.push(`~ ${s.label}: ${w}`);
    }
  }
  // Grid tables print means only: no percentile there to mark.
  const few = rows.filter((s) => !s.grid && s.requests.ok > 0 && (s.metrics.ttftMs?.count ?? s.requests.ok) < MIN_PERCENTILE_SAMPLES);
  if (few.length > 0) {
    out.push(`† p99 from fewer than ${MIN_PERCENTILE_SAMPLES} samples: ${few.map((s) => `${s.label} (${s.requests.ok})`).join(', ')}`);
  }
  // Rows that could not gather enough requests in their longest window say so, with what would (item 11b of issue 36).
  const short = rows.filter((s) => s.fewRequests);
  if (short.length > 0) {
    out.push(`too few requests to describe the load: ${short.map((s) => fewRequestsText(s, s.fewRequests as NonNullable<StageSummary['fewRequests']>)).join('; ')}`);
  }
  for (const s of rows) {
    // An over-saturated stop is the row's overload reason, said with its * mark already.
    if (s.overSaturated !== undefined && s.belowTarget) continue;
    const cut = interruptedNote(s);
    if (cut) out.push(cut);
    else if (s.stoppedEarly) out.push(`${s.label}: ${s.stoppedEarly}`);
    else if (s.requests.ok === 0) out.push(`${s.label}: ${noneFinished(s)}`);
  }
  const checked = stages.filter((s) => s.idleWait);
  if (checked.length > 0) {
    const total = checked.reduce((t, s) => t + (s.idleWait?.waitedS ?? 0), 0);
    // Each row that waited, or came after a row that cut requests, with what it waited for; the others' one way.
    const own = (s: StageSummary): boolean => (s.idleWait?.waitedS ?? 0) >= 0.05 || /^after .* (cut \d+ requests?|stopped early):/.test(s.idleWait?.method ?? '');
    const long = checked.filter(own);
    // What a wait was for ("until the server's /metrics read …") is said once; later rows name only what came before.
    const said = new Set<string>();
    const why = (method: string): string => {
      const m = /^(after .*?): (until .*)$/.exec(method);
      if (!m) return method;
      const [, after, until] = m as unknown as [string, string, string];
      if (said.has(until)) return after;
      said.add(until);
      return method;
    };
    const where = long.length > 0 ? `: ${long.map((s) => `${s.label} ${s.idleWait?.waitedS.toFixed(1)} s${s.idleWait?.idle ? ` (${why(s.idleWait.method)})` : ''}`).join('; ')}` : '';
    const how = [...new Set(checked.filter((s) => s.idleWait?.idle && !own(s)).map((s) => s.idleWait?.method))].join('; ');
    out.push(`idle server before each row: waited ${total.toFixed(1)} s in all${where}${how ? `${long.length > 0 ? '; the other rows' : ''} (${how})` : ''}`);
  }
  const searched = rows.find((s) => s.window?.capSearch);
  const search = searched?.window?.capSearch;
  if (searched && search) {
    const queued = (x: (typeof search.steps)[number]): string =>
      !x.queued ? '' : x.servingAtOnce !== undefined && x.servingAtOnce < x.cap
        ? ` (queued at the server, which served ${x.servingAtOnce} at once: the rest only waited)`
        : ' (queued at the server: more in flight would only lengthen the queue)';
    const steps = search.steps.map((x) => `${x.cap} → ${f2(x.completionRate)} req/s${queued(x)}`).join(', ');
    const m = search.measuredInFlight;
    // The cap beside what the window measured: the row's figures describe the latter.
    const measured = m ? `; the window measured ${m.mean.toFixed(1)} in flight on average, at most ${m.max}` : '';
    const flag = capMismatch(search);
    out.push(`${searched.label}: kept ${search.cap} requests in flight${measured} (searched: ${steps})${flag ? ' — not the cap: see the ~ note' : ''}`);
  }
  return out;
}
