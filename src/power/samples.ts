/**
 * One power reading of one GPU, on the run's clock (performance.now() ms, the clock the records use): the power it
 * drew (W) and/or its energy counter (J, cumulative; may reset). `gpu` is the index the source gives; −1 stands for
 * a source's single total over all its GPUs (trtllm-serve's /energy_metrics).
 */
export interface PowerSample {
  t: number;
  gpu: number;
  watts?: number;
  energyJ?: number;
}

/** A GPU index standing for "all the source's GPUs together". */
export const ALL_GPUS = -1;
