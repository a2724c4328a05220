import type { RunOptions } from '../config/run-options.js';
import { startSimServer } from '../sim/server/index.js';
import { DEFAULT_SIM } from './defaults.js';

/** The simulated engine started in-process when `inferbench run` has no --target. */
export interface EmbeddedSim {
  url: string;
  model: string;
  gpu: string;
  gpus: number;
  quant?: string;
  description: string;
  close(): Promise<void>;
}

export async function startDefaultSim(opts: RunOptions): Promise<EmbeddedSim> {
  const engine = opts.engine ?? DEFAULT_SIM.engine;
  const model = opts.model ?? DEFAULT_SIM.model;
  const gpu = opts.gpu ?? DEFAULT_SIM.gpu;
  const gpus = opts.gpus ?? DEFAULT_SIM.gpus;
  const server = await startSimServer({
    engine: engine as Parameters<typeof startSimServer>[0]['engine'],
    model,
    gpu,
    gpus,
    ...(opts.quant ? { quant: opts.quant } : {}),
    host: '127.0.0.1',
    port: 0,
    seed: opts.seed,
  });
  return {
    url: server.url,
    model,
    gpu,
    gpus,
    ...(opts.quant ? { quant: opts.quant } : {}),
    description: `${engine}, ${model}${opts.quant ? ` (${opts.quant})` : ''}, ${gpus}× ${gpu}`,
    close: () => server.close(),
  };
}
