/**
 * Small power exporters with known power, on 127.0.0.1 (port 0): a DCGM-style Prometheus page and trtllm-serve's
 * /energy_metrics JSON, each computing its readings from a power function of time (performance.now() ms, the same
 * clock the sampler stamps its readings with in this process), so the truth over any window is exact.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Exporter {
  url: string;
  close(): Promise<void>;
}

export interface DcgmExporterOptions {
  /** Watts of GPU `gpu` at time `t` (ms). */
  watts: (t: number, gpu: number) => number;
  gpus: number;
  /** The energy counter (J) at time t; absent: the page has no counter. */
  energyJ?: (t: number, gpu: number) => number;
  /** Answer 503 at these times (a gap in the readings). */
  down?: (t: number) => boolean;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const closer = (server: Server) => (): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

export async function startDcgmExporter(o: DcgmExporterOptions): Promise<Exporter> {
  const server = createServer((_req, res) => {
    const t = performance.now();
    if (o.down?.(t)) {
      res.writeHead(503).end();
      return;
    }
    let body = '# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n';
    for (let g = 0; g < o.gpus; g++) body += `DCGM_FI_DEV_POWER_USAGE{gpu="${g}",UUID="GPU-${g}",modelName="test"} ${o.watts(t, g)}\n`;
    if (o.energyJ) {
      body += '# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n';
      for (let g = 0; g < o.gpus; g++) body += `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="${g}",UUID="GPU-${g}",modelName="test"} ${Math.round(o.energyJ(t, g) * 1000)}\n`;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
  });
  return { url: `${await listen(server)}/metrics`, close: closer(server) };
}

/** trtllm-serve's /energy_metrics: `total_energy_j` of all its GPUs, `query_time` in seconds. */
export async function startTrtllmExporter(energyJ: (t: number) => number): Promise<Exporter> {
  const server = createServer((req, res) => {
    if (req.url !== '/energy_metrics') {
      res.writeHead(404).end();
      return;
    }
    const t = performance.now();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ total_energy_j: energyJ(t), query_time: t / 1000 }));
  });
  return { url: await listen(server), close: closer(server) };
}

/** ∫ watts dt (J) over [a, b] ms, numerically (fine steps: the power functions here are piecewise linear). */
export function truthJoules(watts: (t: number) => number, a: number, b: number): number {
  const steps = 20_000;
  const h = (b - a) / steps;
  let sum = 0;
  for (let i = 0; i < steps; i++) sum += ((watts(a + i * h) + watts(a + (i + 1) * h)) / 2) * h;
  return sum / 1000;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
