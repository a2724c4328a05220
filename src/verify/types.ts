import type { CapacityResult } from '../load/capacity-types.js';
import type { CandidateShape } from '../plan/types.js';

/** Where each candidate's server command comes from (`plan --server-cmd`). */
export type ServerCommandSource =
  /** A shell template filled per candidate: {engine} {model} {checkpoint} {gpu} {gpus} {quant} {kvCacheDtype} {name} {port}. */
  | { kind: 'template'; template: string }
  /** The launch command the plan prints for the candidate, with the engine's port flag added. */
  | { kind: 'launch' }
  /** `inferbench sim` with the candidate's configuration: `argv` starts the same CLI (node and its bin). */
  | { kind: 'sim'; argv: string[]; catalogFiles: string[]; seed: number };

export interface VerifySettings {
  /** The top N feasible candidates are measured. */
  count: number;
  server: ServerCommandSource;
  readyTimeoutMs: number;
  stopTimeoutMs: number;
  /** The verify folder: one folder per candidate (server.log, run/), and verify.json. */
  dir: string;
  /**
   * `run`'s flags for the capacity search, the same as the plan's: --slo, attainment, error share, precision, repeats,
   * arrival, lengths, --max-seconds, --warmup, --seed. The target, the folder and the metadata are added per candidate.
   */
  runArgs: string[];
  /** The capacity search's stated precision, percent (`--capacity-precision`: the bisection's step). */
  precisionPct: number;
}

/** One measured capacity search, as the run path returns it. */
export interface MeasuredRun {
  exitCode: number;
  capacity?: CapacityResult;
  /** The run stopped early (Ctrl-C). */
  interrupted: boolean;
}

/** Runs `inferbench run` with these flags (the CLI's run path: resolve, execute, the run folder's files). */
export type MeasureCapacity = (runArgs: string[], signal: AbortSignal) => Promise<MeasuredRun>;

export type VerificationStatus = 'ok' | 'failed-to-start' | 'not-ready' | 'run-failed' | 'no-capacity' | 'interrupted';

/** One candidate launched and measured: `--json`'s `verifications[]`. */
export interface VerificationEntry {
  /** The candidate's deployment shape and its rank in the plan. */
  candidate: CandidateShape & { planRank: number; replicas: number | null; costPerHour: number | null; gpuHourPrice: number };
  /** Rank by what was measured (1 = cheapest measured deployment); absent when nothing was measured. */
  measuredRank?: number;
  status: VerificationStatus;
  /** Capacity per replica the plan predicted (req/s). */
  predictedCapacity: number;
  /** Capacity per replica measured on the launched server (req/s); null when it could not be measured. */
  measuredCapacity: number | null;
  /** (measured / predicted − 1) × 100; null when not measured. */
  differencePct: number | null;
  /** The capacity search's stated precision, percent (the bisection's step, `--capacity-precision`). */
  precisionPct: number;
  /** |differencePct| ≤ precisionPct. */
  withinPrecision: boolean | null;
  /** The measured search's first failing load (req/s) and its one-line answer. */
  measuredFirstBreach?: number | null;
  verdict?: string;
  /** Replicas, GPUs and $/hour the required load needs at the measured capacity. */
  measuredReplicas?: number;
  measuredCostPerHour?: number;
  /** The server command as run (placeholders filled). */
  command: string;
  /** The `inferbench run` flags of the measurement (without the target's port, which changes per launch). */
  runCommand: string;
  startupSeconds?: number;
  firstRequestMs?: number;
  /** The server's process group (its leader's pid); stopped before the next candidate starts. */
  pid?: number;
  /** The candidate's folder (server.log) and its run folder (summary.json, requests.jsonl, tables). */
  dir: string;
  runDir: string | null;
  serverLog: string;
  /** Whether the port was free again after the server stopped. */
  portFree?: boolean;
  /** Why it was not measured: the reason and the server log's last lines. */
  error?: string;
  logTail?: string;
}

export interface VerifyResult {
  /** In measured order: measured ones by measured cost (then capacity), then the others in plan order. */
  entries: VerificationEntry[];
  dir: string;
  precisionPct: number;
  interrupted: boolean;
  /** The calibration file written, when --save-calibration was given and something was measured. */
  savedCalibration?: string;
  notes: string[];
}
