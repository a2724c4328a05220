/**
 * The built-in simulator (`inferbench sim`) says what hardware it simulates in response headers on every reply, as a
 * real engine reports its version: the GPU, how many, the quantization. Detection reads them from its probes, and a
 * run against the simulator records them where `run --gpu/--gpus/--quant` would go (its table header, summary.json's
 * context, and what `predict --calibrate-from` reads). Kept here, below sim/, so that both sides name the same headers.
 */
export const SIM_GPU_HEADER = 'x-sim-gpu';
export const SIM_GPUS_HEADER = 'x-sim-gpus';
export const SIM_QUANT_HEADER = 'x-sim-quant';

export interface SimHardware {
  gpu: string;
  gpus: number;
  quant?: string;
}

/** The headers the simulator sends with every reply. */
export function simHardwareHeaders(h: SimHardware): Record<string, string> {
  return { [SIM_GPU_HEADER]: h.gpu, [SIM_GPUS_HEADER]: String(h.gpus), ...(h.quant !== undefined ? { [SIM_QUANT_HEADER]: h.quant } : {}) };
}

/** The simulator's hardware from a reply's headers; undefined for any other server. */
export function readSimHardware(headers: Pick<Headers, 'get'>): SimHardware | undefined {
  const gpu = headers.get(SIM_GPU_HEADER);
  if (gpu === null || gpu === '') return undefined;
  const gpus = Number(headers.get(SIM_GPUS_HEADER));
  const quant = headers.get(SIM_QUANT_HEADER);
  return { gpu, gpus: Number.isInteger(gpus) && gpus > 0 ? gpus : 1, ...(quant !== null && quant !== '' ? { quant } : {}) };
}
