import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { walkMeasuredRecords, type RecordTally } from './requests-reader.js';
import { Reservoir, seededRandom } from './reservoir.js';

/** One time bucket of a run, from its first send: what was sent, finished and in flight. */
export interface TimelineBin {
  /** Start of the bucket, seconds after the run's first send. */
  tS: number;
  sends: number;
  /** Successful completions per second in the bucket. */
  completionsPerS: number;
  outputTokensPerS: number;
  /** Requests in flight at the end of the bucket (ramp-up ones included: they load the server too). */
  inFlight: number;
}

/** What the HTML report draws from requests.jsonl, all of it bounded whatever the run's size. */
export interface RunDetails extends RecordTally {
  /** Per row (stage index): sampled per-request values of its measured successful requests. */
  perRow: Map<number, { ttftMs: number[]; itlMs: number[]; e2eMs: number[] }>;
  /** Measured successful requests: (seconds from the first send, TTFT, prompt tokens, row), sampled. */
  points: Array<{ tS: number; ttftMs?: number; promptTokens: number; outputTokens: number; stage: number }>;
  timeline: TimelineBin[];
  /** Mean gap between content chunks by chunk position (≈ token position), bucketed past 32. */
  gapByPosition: Array<{ position: number; meanGapMs: number; n: number }>;
  /** The run's first send on its own clock (ms): telemetry.jsonl times are on the same clock. */
  firstSendMs: number;
  sampled: boolean;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

const BIN_MS = 250;
const MAX_BINS = 150;

/**
 * One streaming pass over requests.jsonl: per-row samples (≤ perRowLimit values per metric and row), a sample of
 * points for scatter plots, the whole run's timeline in time buckets (every record, ramp-up included), and chunk
 * gaps by position. Memory is bounded by the limits and the run's duration, not its request count.
 */
export async function readRunDetails(dir: string, opts: { perRowLimit?: number; pointLimit?: number } = {}): Promise<RunDetails> {
  const perRowLimit = opts.perRowLimit ?? 600;
  const out: RunDetails = { perRow: new Map(), points: [], timeline: [], gapByPosition: [], firstSendMs: Number.NaN, total: 0, ok: 0, errors: new Map(), badLines: 0, sampled: false };
  const rows = new Map<number, { ttftMs: Reservoir<number>; itlMs: Reservoir<number>; e2eMs: Reservoir<number> }>();
  const points = new Reservoir<RunDetails['points'][number] & { at: number }>(opts.pointLimit ?? 3000, seededRandom(0x2545f491));
  const bins = new Map<number, { sends: number; ends: number; ok: number; tokens: number }>();
  const bin = (ms: number) => {
    const k = Math.floor(ms / BIN_MS);
    let b = bins.get(k);
    if (!b) bins.set(k, (b = { sends: 0, ends: 0, ok: 0, tokens: 0 }));
    return b;
  };
  const gaps = new Map<number, { sum: number; n: number }>();
  let firstSend = Number.POSITIVE_INFINITY;
  const tally = await walkMeasuredRecords(
    dir,
    (r) => {
      const sent = r['sentAtMs'];
      const stage = finite(r['stage']) ? r['stage'] : 0;
      let row = rows.get(stage);
      if (!row) rows.set(stage, (row = { ttftMs: new Reservoir(perRowLimit, seededRandom(0x9e3779b9 + stage)), itlMs: new Reservoir(perRowLimit, seededRandom(0x85ebca6b + stage)), e2eMs: new Reservoir(perRowLimit, seededRandom(0xc2b2ae35 + stage)) }));
      for (const k of ['ttftMs', 'itlMs', 'e2eMs'] as const) if (finite(r[k])) row[k].offer(r[k]);
      if (finite(sent)) {
        points.offer({ at: sent, tS: 0, ...(finite(r['ttftMs']) ? { ttftMs: r['ttftMs'] } : {}), promptTokens: finite(r['promptTokens']) ? r['promptTokens'] : 0, outputTokens: finite(r['outputTokens']) ? r['outputTokens'] : 0, stage });
      }
      const chunkGaps = r['chunkGapsMs'];
      if (Array.isArray(chunkGaps)) {
        chunkGaps.forEach((g, i) => {
          if (!finite(g)) return;
          const position = i + 1 < 32 ? i + 1 : 32 * Math.floor((i + 1) / 32);
          const acc = gaps.get(position) ?? { sum: 0, n: 0 };
          acc.sum += g;
          acc.n++;
          gaps.set(position, acc);
        });
      }
    },
    (r) => {
      // The timeline counts every record, ramp-up included.
      const sent = r['sentAtMs'];
      const end = r['endAtMs'];
      if (!finite(sent)) return;
      firstSend = Math.min(firstSend, sent);
      bin(sent).sends++;
      if (!finite(end)) return;
      const b = bin(end);
      b.ends++;
      if (r['status'] === 'ok') {
        b.ok++;
        if (finite(r['outputTokens'])) b.tokens += r['outputTokens'];
      }
    },
  );
  Object.assign(out, tally);
  for (const [stage, row] of rows) {
    out.perRow.set(stage, { ttftMs: row.ttftMs.items, itlMs: row.itlMs.items, e2eMs: row.e2eMs.items });
    out.sampled ||= row.ttftMs.sampled || row.itlMs.sampled || row.e2eMs.sampled;
  }
  out.firstSendMs = Number.isFinite(firstSend) ? firstSend : Number.NaN;
  out.points = points.items.map(({ at, ...p }) => ({ ...p, tS: (at - firstSend) / 1000 }));
  out.timeline = timelineOf(bins, firstSend);
  out.gapByPosition = [...gaps.entries()].sort((a, b) => a[0] - b[0]).map(([position, g]) => ({ position, meanGapMs: g.sum / g.n, n: g.n }));
  return out;
}

/** Buckets merged so a long run keeps at most MAX_BINS of them; in-flight is sends minus ends so far. */
function timelineOf(bins: Map<number, { sends: number; ends: number; ok: number; tokens: number }>, firstSend: number): TimelineBin[] {
  if (bins.size === 0 || !Number.isFinite(firstSend)) return [];
  const keys = [...bins.keys()];
  const k0 = Math.floor(firstSend / BIN_MS);
  const k1 = Math.max(...keys);
  const per = Math.max(1, Math.ceil((k1 - k0 + 1) / MAX_BINS));
  const out: TimelineBin[] = [];
  let inFlight = 0;
  for (let k = k0; k <= k1; k += per) {
    let sends = 0;
    let ok = 0;
    let tokens = 0;
    for (let j = k; j < k + per; j++) {
      const b = bins.get(j);
      if (!b) continue;
      sends += b.sends;
      ok += b.ok;
      tokens += b.tokens;
      inFlight += b.sends - b.ends;
    }
    const seconds = (per * BIN_MS) / 1000;
    out.push({ tS: ((k - k0) * BIN_MS) / 1000, sends, completionsPerS: ok / seconds, outputTokensPerS: tokens / seconds, inFlight });
  }
  return out;
}

/** One sample of the server's /metrics (telemetry.jsonl), seconds from the run's first sample. */
export interface TelemetryPoint {
  tS: number;
  running?: number;
  waiting?: number;
  kvUsage?: number;
  stage?: number;
}

/** One GPU's power reading (power.jsonl, `run --power`), on the run's clock (ms). */
export interface PowerPoint {
  atMs: number;
  gpu: number;
  watts: number;
  /** Several --target URLs: the replica whose source gave it (its GPUs numbered by its own source). */
  replica?: number;
}

/** power.jsonl's readings that carry watts (energy-counter-only sources have none to chart); torn lines skipped. */
export function readPowerSeries(dir: string): PowerPoint[] {
  const path = join(dir, 'power.jsonl');
  if (!existsSync(path)) return [];
  const out: PowerPoint[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const r = JSON.parse(line) as Record<string, unknown>;
      if (finite(r['t']) && finite(r['gpu']) && finite(r['watts'])) out.push({ atMs: r['t'], gpu: r['gpu'], watts: r['watts'], ...(finite(r['replica']) ? { replica: r['replica'] } : {}) });
    } catch {
      // A run killed mid-write leaves a torn last line.
    }
  }
  return out;
}

/** telemetry.jsonl, when the server had /metrics; unreadable lines are skipped. Times are the run's clock (ms). */
export function readTelemetry(dir: string): Array<TelemetryPoint & { atMs: number }> {
  const path = join(dir, 'telemetry.jsonl');
  if (!existsSync(path)) return [];
  const out: Array<TelemetryPoint & { atMs: number }> = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const r = JSON.parse(line) as Record<string, unknown>;
      if (!finite(r['atMs'])) continue;
      out.push({
        atMs: r['atMs'],
        tS: 0,
        ...(finite(r['running']) ? { running: r['running'] } : {}),
        ...(finite(r['waiting']) ? { waiting: r['waiting'] } : {}),
        ...(finite(r['kvUsage']) ? { kvUsage: r['kvUsage'] } : {}),
        ...(finite(r['stage']) ? { stage: r['stage'] } : {}),
      });
    } catch {
      // A run killed mid-write leaves a torn last line.
    }
  }
  return out;
}
