import { z } from 'zod';

/**
 * One replica's part of a row's energy (several --target URLs, each read through its own /metrics): its GPUs' joules
 * over the row's window, and per output token of that replica's own requests. A replica without a power source has
 * no joules and a `reason`.
 */
export const replicaEnergySchema = z.object({
  index: z.number(),
  url: z.string().optional(),
  /** Where its power came from (`dcgm:URL/metrics`); `none` when it had no source. */
  source: z.string(),
  joules: z.number().optional(),
  avgWatts: z.number().optional(),
  joulesPerOutputToken: z.number().optional(),
  /** Its GPUs as its own source numbers them. */
  gpus: z.array(z.number()),
  coverage: z.number(),
  valid: z.boolean(),
  reason: z.string().optional(),
});
export type ReplicaEnergy = z.output<typeof replicaEnergySchema>;

/**
 * A row's GPU energy over its measured window only (src/power/): joules and mean watts of all the deployment's GPUs
 * together, and the energy per output token, per request and per prompt + output token. `valid` only when the power
 * readings covered at least 90% of the window with no gap over 1 s (and, with several replicas, every replica had a
 * source); otherwise `reason` says why and the per-token figures are left out (a figure from a window the readings did
 * not cover would be a guess).
 */
export const energySchema = z.object({
  joules: z.number(),
  avgWatts: z.number(),
  joulesPerOutputToken: z.number().optional(),
  joulesPerRequest: z.number().optional(),
  joulesPerTotalToken: z.number().optional(),
  /**
   * The GPUs counted (their indices as the source numbers them; empty: the source reports one total for all). Several
   * replicas: numbered on across the replicas in --target order (each replica's own numbers are in `replicas`).
   */
  gpus: z.array(z.number()),
  /** Where the power came from: `dcgm:URL`, `nvidia-smi`, `trtllm:URL`, `cmd:COMMAND`, or `simulator` (predict). Several replicas: each one's, joined by ` + `. */
  source: z.string(),
  /** Share of the window the readings covered, 0..1 (an energy counter read at both edges covers it all). */
  coverage: z.number(),
  valid: z.boolean(),
  reason: z.string().optional(),
  /** Several replicas (--target URL,URL,… with --power auto): each replica's own energy; `joules` is their sum. */
  replicas: z.array(replicaEnergySchema).optional(),
});
export type Energy = z.output<typeof energySchema>;

/**
 * summary.json and manifest.json `power`: what `--power` asked for and what the run read, so "no power source found"
 * is told apart from "power not asked for" (`--power none`).
 */
export const runPowerSchema = z.object({
  /** `--power` as given: `auto`, `none`, `dcgm:URL`, … */
  requested: z.string(),
  /** The source read (several replicas: each one's, joined by ` + `); null: none was found or none was asked for. */
  found: z.string().nullable(),
  /** Why nothing was read, or why not every replica's GPUs are counted. */
  reason: z.string().optional(),
  /** Several replicas: each one's source (null: it had none). */
  replicas: z.array(z.object({ index: z.number(), url: z.string(), source: z.string().nullable() })).optional(),
});
export type RunPower = z.output<typeof runPowerSchema>;
