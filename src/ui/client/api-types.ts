/**
 * The dashboard's JSON API: what the server (src/ui/*.ts, Node) sends and the browser code (src/ui/client/*.ts,
 * DOM) reads. Types only, so both TypeScript programs can import it.
 */

/** One row of the Runs page: the fields `inferbench ls` shows, plus what the filters need. */
export interface RunRow {
  id: string;
  name: string;
  createdAt: string;
  layout: 'sweep' | 'grid' | '';
  /** The profile as `inferbench ls` shows it: concurrent, constant, capacity, sweep, grid… */
  profile: string;
  model: string;
  engine: string;
  gpu: string;
  quant: string;
  rows: number;
  failedRows: number;
  /** `ls`'s Rows cell: a grid's cells ("4 cells"), else rows, with failed / cut / interrupted ones named. */
  rowsText: string;
  label: string;
  /** 'inferbench', or the tool an imported run came from (manifest.json `source.tool`). */
  tool: string;
  predicted: boolean;
  /** Legend name in charts (series.ts). */
  series: string;
  /** A run feeding the dashboard right now (or one that just ended), by folder name. */
  live?: LiveStatus;
  /** The folder has a summary.json that could not be read. */
  error?: string;
}

export interface TableJson {
  headers: string[];
  rows: string[][];
}

/** A Vega-Lite spec the browser compiles and renders (vega-lite and vega are served from node_modules). */
export interface ChartJson {
  name: string;
  title: string;
  spec: Record<string, unknown>;
}

export interface RunView {
  row: RunRow;
  /** Heading above the table, as plain text (the seed layout's heading lines). */
  heading: string;
  table: TableJson;
  /** Lines under the table (findings, row marks, capacity), as `inferbench report` prints them. */
  notes: string[];
  capacityVerdict?: string;
  windowRules: string;
  healthLine?: string;
  charts: ChartJson[];
  /** Label/value pairs: target, tool, profile, workload… */
  metadata: [string, string][];
  /** The command line that made the run (secrets redacted), or what is known of it. */
  command: string;
  /** manifest.json with every secret-looking value redacted; null when the folder has none. */
  manifest: Record<string, unknown> | null;
  warnings: string[];
  hasRequests: boolean;
  hasTelemetry: boolean;
  /** power.jsonl is there (`run --power`): the telemetry view carries its GPU-power chart. */
  hasPower?: boolean;
}

/** GET /api/runs/:id for a live run whose first row has not finished (no summary.json yet). */
export interface RunPending {
  pending: true;
  live: LiveRun;
}

export interface RequestsView {
  /** Measured (non-warm-up) requests read. */
  total: number;
  ok: number;
  /** "CODE: message" and count, most frequent first. */
  errors: [string, number][];
  badLines: number;
  /** True when a run had more requests than the charts draw (a seeded sample is drawn). */
  sampled: boolean;
  /** The rows with successful measured requests, in table order: the row picker's choices (key: the histograms' `row` signal; requests: the row's successful measured requests). */
  rows: { key: string; label: string; requests: number }[];
  /** The row the histograms show first. */
  firstRow: string;
  /** One row at a time (their `row` signal picks it): never every row pooled. */
  histograms: ChartJson[];
  scatter?: ChartJson;
}

export interface TelemetryView {
  samples: number;
  charts: ChartJson[];
}

export interface CompareView {
  title: string;
  names: string[];
  sections: { heading: string; table: TableJson }[];
  verdict?: { table: TableJson; lines: string[] };
  capacityRanking?: { table: TableJson; lines: string[] };
  charts: ChartJson[];
  /** Present when the runs differ in what compare holds fixed: shown in bold above everything. */
  mismatches: string[];
  notes: string[];
}

/** Why a compare was not drawn (mixed layouts, runs that differ without allow=1, an unknown id). */
export interface ApiError {
  error: string;
  hint?: string;
  /** compare: the runs differ; repeat with allow=1 to compare them anyway. */
  canAllow?: boolean;
}

export type LiveStatus = 'running' | 'finished' | 'interrupted' | 'failed' | 'lost';

/** Counters of the row in progress (from the run's own progress counters, read every 250 ms). */
export interface LiveProgress {
  stage: number;
  label: string;
  stageNo: string;
  elapsedS: number;
  dispatched: number;
  done: number;
  errors: number;
  inFlight: number;
}

/** A request as the live scatter draws it: seconds since the run's first request, TTFT, its row. */
export interface LivePoint {
  t: number;
  ttftMs: number;
  row: string;
  /** Row index: orders the legend. */
  order: number;
}

export interface LiveRun {
  id: string;
  name: string;
  status: LiveStatus;
  model: string;
  engine: string;
  profile: string;
  plannedStages: number;
  stagesDone: number;
  progress?: LiveProgress;
  exitCode?: number;
  /** Last lines of failed requests ("CODE: message"), newest last. */
  recentErrors: string[];
  startedAt: string;
  updatedAt: string;
}

/** What /api/events pushes (server-sent events, event name `live` or `runs`). */
export interface LiveMessage {
  run: LiveRun;
  /** New scatter points since the last message. */
  points: LivePoint[];
  /** A row finished (its summary.json was rewritten): tables and charts should be re-read. */
  rowEnded: boolean;
}

/** GET /api/live/:id: the live state with every point kept so far (a page opened mid-run). */
export interface LiveSnapshot {
  run: LiveRun;
  points: LivePoint[];
  /** The live TTFT scatter with those points; its data set `points` takes the new ones as they come. */
  chart: ChartJson;
}

/** GET /api/matrices: the matrix folders (`inferbench matrix`) under the results directory. */
export interface MatrixRow {
  name: string;
  createdAt: string;
  state: string;
  cells: number;
  ok: number;
}

/** GET /api/matrices/:name: the cells table and matrix.md as the command wrote it. */
export interface MatrixView {
  name: string;
  state: string;
  table: { headers: string[]; rows: string[][] };
  lines: string[];
  /** matrix.md (the comparison of the cells' runs as `compare` prints it), shown as text. */
  markdown: string;
}
