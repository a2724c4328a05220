import { z } from 'zod';

/**
 * A row's GPU energy over its measured window only (src/power/): joules and mean watts of all the deployment's GPUs
 * together, and the energy per output token, per request and per prompt + output token. `valid` only when the power
 * readings covered at least 90% of the window with no gap over 1 s; otherwise `reason` says why and the per-token
 * figures are left out (a figure from a window the readings did not cover would be a guess).
 */
export const energySchema = z.object({
  joules: z.number(),
  avgWatts: z.number(),
  joulesPerOutputToken: z.number().optional(),
  joulesPerRequest: z.number().optional(),
  joulesPerTotalToken: z.number().optional(),
  /** The GPUs counted (their indices as the source numbers them; empty: the source reports one total for all). */
  gpus: z.array(z.number()),
  /** Where the power came from: `dcgm:URL`, `nvidia-smi`, `trtllm:URL`, `cmd:COMMAND`, or `simulator` (predict). */
  source: z.string(),
  /** Share of the window the readings covered, 0..1 (an energy counter read at both edges covers it all). */
  coverage: z.number(),
  valid: z.boolean(),
  reason: z.string().optional(),
});
export type Energy = z.output<typeof energySchema>;
