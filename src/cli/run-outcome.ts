import type { StageSummary } from '../metrics/summary.js';

/**
 * The `error:` line of a run in which no row has a successful request inside its window.
 *
 * A row stopped as over-saturated did not fail: its server answered some requests, but far fewer than the row
 * sent, and the row was cut before its window measured anything. When every row ended that way the line says
 * so, with the rate the server did complete, instead of "no request succeeded".
 */
export function noSuccessMessage(stages: readonly StageSummary[]): string {
  const generic = 'no request succeeded; see the Failed column above';
  if (stages.length === 0 || !stages.every((s) => s.overSaturated !== undefined)) return generic;
  // The lowest rate tried is the one to lower from.
  const row = [...stages].sort((a, b) => (a.targetRate ?? Infinity) - (b.targetRate ?? Infinity))[0] as StageSummary;
  const done = completedRate(row.overSaturated as string);
  const load = row.targetRate !== undefined ? `${fmtRate(row.targetRate)} req/s is` : `the load of ${row.label} is`;
  const held =
    done?.completions === 0
      ? `nothing completed in ${done.seconds.toFixed(1)} s; `
      : done !== undefined && done.seconds > 0
        ? `it completed ~${fmtRate(done.completions / done.seconds)} req/s; `
        : '';
  const lower = row.targetRate !== undefined ? 'lower --rate' : 'lower the load';
  return `${load} far past what this server holds (${held}the row was stopped as over-saturated, see the note under the table): ${lower}`;
}

/** "N completions for M sends in S s", as window.ts writes every over-saturation reason. */
export function completedRate(reason: string): { completions: number; seconds: number } | undefined {
  const m = /(\d+) completions for \d+ sends in ([\d.]+) s/.exec(reason);
  if (!m) return undefined;
  return { completions: Number(m[1]), seconds: Number(m[2]) };
}

function fmtRate(r: number): string {
  return r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2);
}

/**
 * A --data file with fewer entries than the run sent: its entries went out again (request ids pick them in turn), and
 * a server with a prefix cache answers a repeated prompt from it. Said once, under the table.
 */
export function datasetRepeats(dataPath: string | undefined, entries: number, stages: readonly Pick<StageSummary, 'requests'>[]): string | undefined {
  if (dataPath === undefined || entries <= 0) return undefined;
  // Repeats matter where they can touch the figures: measured and ramp-up sends. The count said is every send,
  // the cool-down's too (they come after the measured requests, so alone they never call for the note).
  const beforeCooldown = stages.reduce((n, s) => n + s.requests.total + s.requests.warmup, 0);
  if (beforeCooldown <= entries) return undefined;
  const sent = beforeCooldown + stages.reduce((n, s) => n + (s.requests.cooldown ?? 0), 0);
  const times = Math.ceil(sent / entries);
  const what = entries === 1 ? `its one entry was sent ${sent} times` : `its ${entries} entries were sent again (up to ${times} times each)`;
  return (
    `${dataPath} has ${entries} ${entries === 1 ? 'entry' : 'entries'} and the run sent ${sent} requests: ${what}, ` +
    'and a server with a prefix cache answers repeated prompts faster — use a file with more entries than requests for figures without repeats'
  );
}

/**
 * `predict --repeat N` where every repeat gave the same figures (constant arrivals and fixed lengths in virtual time
 * are deterministic): a "± 0.00" would read as a measured certainty. The intervals are dropped (each repeat stays in
 * `repeats`) and the note says why. Returns the note, or undefined when the repeats differ.
 */
export function dropIdenticalRepeats(stages: StageSummary[], repeat: number | undefined): string | undefined {
  if (repeat === undefined || repeat < 2) return undefined;
  const withIntervals = stages.filter((s) => s.intervals !== undefined);
  if (withIntervals.length === 0) return undefined;
  // The same up to floating-point rounding (each repeat starts at another virtual instant).
  const same = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  const identical = withIntervals.every((s) => Object.values(s.intervals ?? {}).every((ci) => ci.values.every((v) => same(v, ci.values[0] as number))));
  if (!identical) return undefined;
  for (const s of withIntervals) delete s.intervals;
  return `--repeat ${repeat}: the ${repeat} repeats of this simulation gave the same figures (virtual time is deterministic with these arrivals and lengths), so repeats add nothing here and no ± is shown; for run-to-run spread, measure a server with \`run --repeat\``;
}
