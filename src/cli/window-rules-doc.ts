/**
 * The parts of docs/metrics.md that state the steady window's rules, written from the constants the code uses
 * (load/window, load/profiles, config/run-options), so the document cannot fall out of date with them:
 * test/cli/window-rules-doc.test.ts fails when docs/metrics.md differs from what this writes, and
 * `npx tsx scripts/gen-window-docs.ts` rewrites the marked sections.
 */
import { DEFAULT_DRAIN_SECONDS, DEFAULT_STAGE_SECONDS } from '../config/run-options.js';
import { ADAPTIVE_CAP, SATURATION_STOP } from '../load/profiles.js';
import { DEFAULT_EXTEND_FACTOR, DEFAULT_MIN_SAMPLES, FAST_FAILURE_MS, FAST_FAILURE_STREAK, MAX_WINDOW_MS, SAMPLE_WINDOW_MARGIN, SAMPLE_WINDOW_MAX_MS } from '../load/window.js';
import { SATURATION_SIGNS } from '../load/window/saturation-stop.js';

/** Every figure the text quotes, as the code holds it. */
export interface WindowDocFigures {
  stageSeconds: number;
  drainSeconds: number;
  minSamples: number;
  extendFactor: number;
  sampleWindowMaxMs: number;
  sampleWindowMargin: number;
  maxWindowMs: number;
  fastFailureStreak: number;
  fastFailureMs: number;
  capStart: number;
  capGrowth: number;
  capMinGain: number;
  completionShare: number;
  minSends: number;
  confirmMs: number;
  maxInFlight: number;
  minGrowth: number;
  growthShare: number;
  latencyRise: number;
  slackSd: number;
}

export const WINDOW_DOC_FIGURES: WindowDocFigures = {
  stageSeconds: DEFAULT_STAGE_SECONDS,
  drainSeconds: DEFAULT_DRAIN_SECONDS,
  minSamples: DEFAULT_MIN_SAMPLES,
  extendFactor: DEFAULT_EXTEND_FACTOR,
  sampleWindowMaxMs: SAMPLE_WINDOW_MAX_MS,
  sampleWindowMargin: SAMPLE_WINDOW_MARGIN,
  maxWindowMs: MAX_WINDOW_MS,
  fastFailureStreak: FAST_FAILURE_STREAK,
  fastFailureMs: FAST_FAILURE_MS,
  capStart: ADAPTIVE_CAP.start,
  capGrowth: ADAPTIVE_CAP.growth,
  capMinGain: ADAPTIVE_CAP.minGain,
  completionShare: SATURATION_STOP.completionShare,
  minSends: SATURATION_STOP.minSends,
  confirmMs: SATURATION_STOP.confirmMs,
  maxInFlight: SATURATION_STOP.maxInFlight,
  minGrowth: SATURATION_SIGNS.minGrowth,
  growthShare: SATURATION_SIGNS.growthShare,
  latencyRise: SATURATION_SIGNS.latencyRise,
  slackSd: SATURATION_SIGNS.slackSd,
};

/** 0.15 → "15%", 0.075 → "7.5%". */
export const percent = (share: number): string => `${Number((share * 100).toFixed(2))}%`;
/** 0.5 → "half", 0.25 → "a quarter", else a percentage. */
const fraction = (share: number): string => ({ 0.5: 'half', 0.25: 'a quarter' })[share] ?? percent(share);
/** 600000 → "10 minutes", 90000 → "90 s". */
const duration = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}` : `${ms / 1000} s`);

/** Steps 1–3 of "Per row: the steady window". */
function phases(f: WindowDocFigures): string {
  return `1. **Ramp-up.** The window opens once the load has run for one request latency (and not before
   \`--warmup S\`):
   - closed loops (\`synchronous\`, \`concurrent@N\`) hold their N requests in flight from the first send:
     the window opens when the first request completes, and their first requests are measured too;
   - open loops (\`asynchronous@R\`) fill up over a latency that grows with the load: the window opens when a
     request *sent after the first completion* completes (two hops). Requests sent before are ramp-up:
     saved in \`requests.jsonl\` with \`"warmup": true\`, counted in \`requests.warmup\`, left out of the figures.
     At the ramp's time limit (30 s, 3× \`--max-seconds\` or 3× the first latency, whichever is longest) a request
     sent after the first completion and still open marks the row as not keeping up; a row so sparse that
     nothing was sent since (0.01 req/s) opens its window then;
   - throughput rows first search their in-flight cap (below), then measure at it.
2. **Window.** It lasts \`--max-seconds\` (default ${f.stageSeconds}), kept open — up to ${f.extendFactor}× that — until at least ${f.minSamples} requests
   were sent in it and it is at least as long as the mean latency of the requests sent in it (so its
   completions are mostly of its own requests); it then ends on the next completion, so that, opening on
   one too, it spans whole intervals between completions (a synchronous row reads exactly 1 / latency). A
   sweep's rows (the default profile) are kept open past ${f.extendFactor}× for their ${f.minSamples} requests as long as these take at
   the rate the row sends, ${percent(f.sampleWindowMargin - 1)} more for noise, up to ${duration(f.sampleWindowMaxMs)} — on a server of 0.7 req/s, ${f.extendFactor}× 5 s held
   10–14 requests in every row — unless they would take longer than that (the row then closes at ${f.extendFactor}× and says it
   held too few, with the \`--max-seconds\` that would hold them). A window none of whose requests has finished yet
   waits for one (up to ${duration(f.maxWindowMs)}). With \`--max-requests N\` it closes once N requests (conversations, with
   \`--turns\`) were sent in it.
3. **Cool-down.** The load stays on after the window closes — at the row's own arrival process, its N streams,
   or a throughput row's searched cap — until every request measured in the window has finished, as MLPerf
   LoadGen and GuideLLM do: the window's last requests run under the same load as its first, so the first and
   last quarter of a steady row agree (with sending stopped at the window's end instead, a row near saturation
   read its ITL ~25% low and a throughput row its output tok/s above req/s × output tokens). What the cool-down
   sends is not measured: saved in \`requests.jsonl\` with \`"warmup": true, "cooldown": true\`, counted in
   \`requests.cooldown\`, left out of the figures; once the measured requests have finished, what is still in flight
   (the cool-down's, and any ramp-up request still running) is cancelled (\`requests.cooldownCut\`; the next row's idle
   wait treats these as cut requests).
   Measured requests still running \`--drain\` seconds (default ${f.drainSeconds}) after the window closed are *cut* (shown as
   cut, never as failures). A row stopped as over-saturated (below), on a streak of fast failures (${f.fastFailureStreak} in a row,
   each within ${f.fastFailureMs} ms), on a silent server or by Ctrl-C stops at once, with no cool-down.`;
}

/** The paragraph on throughput rows' in-flight cap search. */
function capSearch(f: WindowDocFigures): string {
  return `**Throughput rows** (\`throughput\`, the sweep's second row) do not flood the server. Without
\`--max-concurrency\` the cap on requests in flight starts at ${f.capStart} and is multiplied by ${f.capGrowth} while each step raises
the completion rate (cap / mean latency, Little's law) by ${percent(f.capMinGain)} or more; the first step that does not is the last:
it keeps its cap if it still gained ${percent(f.capMinGain / 2)}, else goes back to the previous one — and the window then opens only once
the requests in flight have fallen to that cap. A step's rate comes from settled requests only: those sent after
the step's first request completed (one full latency at the new cap, the previous step's backlog gone), never from
the first completions, which on a server with few slots never queued (on llama.cpp with 4 slots, the first 8 of 16
put the rate at 2.8× what the server delivers). A step whose settled requests waited at the server for over half
their latency (first token beyond the row's quickest) found a queue at the server: more in flight would only
lengthen it. The search then goes down to what the server served at once — the most requests streaming at one
moment (a request in the server's queue streams nothing), or without token times the completion rate × the time
not spent waiting (Little's law) — and runs one step there: the cap stays if it kept the best step's rate within
${percent(f.capMinGain)}, else it goes back up to that step and the row is marked \`~\` (its time to first token and latency
include the queue). On llama.cpp with 4 slots, 16 in flight were 4 running and 12
waiting (a first token of 14.6 s): the search goes down to 4. The server then holds no queue, or a short one (it
stays saturated), and the cool-down after the row takes a few request latencies: no backlog is left for the next
row. The search is printed under the table beside what the window measured
(\`throughput: kept 64 requests in flight; the window measured 63.8 in flight on average, at most 64 (searched: 16 →
12.1 req/s, 64 → 15.9 req/s, …)\`) and kept in \`stages[].window.capSearch\` (\`measuredInFlight: {mean, max}\`); a
window that held more than its cap at once, or on average clearly fewer, marks the row \`~\` and says so.`;
}

/** The paragraph on the over-saturation stop. */
function saturationStop(f: WindowDocFigures): string {
  return `**Over-saturated rows stop early** (every open-loop row with a target rate; not trace replays). A row far past the
server's capacity would spend its whole window building a queue, then minutes draining it, and measure only the
backlog (GuideLLM's over-saturation stop). From the first completion on, a row stops once three signs agree:
completions stay under ${percent(f.completionShare)} of sends (counted after ${f.minSends} sends), the requests in flight have grown by at least ${f.minGrowth} and
by ${fraction(f.growthShare)} of what was in flight at the first completion, and the latest time to first token — or end-to-end latency,
for engines that admit everything and slow every step instead — is ${fraction(f.latencyRise - 1)} above the first ones; and they still
agree, with no fewer requests in flight, ${f.confirmMs} ms after they first did. That last
check tells a queue that lasts from a hiccup: a host stall of a few hundred ms on a row of 20-ms requests backs up a
dozen requests and doubles the latest latencies too, then drains (\`test/load/saturation-stop.test.ts\`). Random
arrivals get ${f.slackSd} standard deviations of slack on the counts. The row's requests in flight are cancelled, it is
flagged \`*\` with \`overSaturated\` (and \`overload\`) saying what was seen — \`over-saturated: 13 completions for 26
sends in 1.3 s after the first completion, in flight 5 → 17, time to first token 113 → 613 ms\` at twice a 2-slot
server's capacity — and the profile goes on with its next row. A row just over capacity (completions at 80–90% of
sends) is not stopped: it runs its window and is flagged overloaded as above. An open loop without
\`--max-concurrency\` also stops, completions or not, once ${f.maxInFlight.toLocaleString('en-US')} of its requests are in flight at once (the client's
connections for such rows: past them requests would wait in the client; \`over-saturated: ${f.maxInFlight} requests in flight,
the most an open loop holds …\`), so \`--rate 1000\` against a server that holds 28 req/s ends in seconds rather than
with 16,000 requests (and sockets) open. When every row ended that way the run's \`error:\` line says the rate is far
past what the server holds, with the rate it did complete, instead of "no request succeeded".`;
}

/** The generated sections of docs/metrics.md, by marker name. */
export function windowDocSections(f: WindowDocFigures = WINDOW_DOC_FIGURES): Record<string, string> {
  return { 'window-phases': phases(f), 'window-cap-search': capSearch(f), 'window-saturation-stop': saturationStop(f) };
}

const begin = (name: string): string => `<!-- generated: ${name} (src/cli/window-rules-doc.ts; rewrite: npx tsx scripts/gen-window-docs.ts) -->`;
const end = (name: string): string => `<!-- end generated: ${name} -->`;

/**
 * `doc` with every marked section replaced by what the constants say now. Throws when a section's markers are
 * missing, so a document that lost them is not silently left as it was.
 */
export function withWindowDocSections(doc: string, sections: Record<string, string> = windowDocSections()): string {
  let out = doc;
  for (const [name, text] of Object.entries(sections)) {
    const from = out.indexOf(begin(name));
    const to = out.indexOf(end(name));
    if (from < 0 || to < from) throw new Error(`docs/metrics.md has no generated section "${name}" (markers ${begin(name)} … ${end(name)})`);
    out = `${out.slice(0, from)}${begin(name)}\n${text}\n${out.slice(to)}`;
  }
  return out;
}
