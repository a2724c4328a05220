/**
 * `inferbench sim --replicas N --router P` (issue 34 item 3): N simulated engines, each its own server with its own
 * KV cache and prefix cache on a private loopback port, behind one front port whose router (./router.ts) picks the
 * replica of every generation request and names it in the `x-sim-replica` response header (0-based). The reply is
 * streamed through as the engine writes it. GET /metrics sums the replicas' counters and running/waiting gauges and
 * averages their usage and hit-rate gauges (one server, as a client's telemetry sees it); other GETs (/v1/models,
 * /version, /tokenize, /sim/v1/trace) are replica 0's.
 */
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { configError } from '../../core/errors.js';
import { startSimServer, type SimServer, type SimServerOptions } from '../server/index.js';
import { promptText, SimRouter, type RouterPolicy } from './router.js';
import { REPLICA_HEADER } from './replica-header.js';

export { REPLICA_HEADER };

export interface SimClusterOptions extends SimServerOptions {
  replicas: number;
  router: RouterPolicy;
}

export interface SimCluster {
  url: string;
  port: number;
  replicas: readonly SimServer[];
  /** Requests the router sent to each replica. */
  routed(): number[];
  close(): Promise<void>;
}

export async function startSimCluster(options: SimClusterOptions): Promise<SimCluster> {
  const { replicas: n, router: policy, host = '127.0.0.1', port = 0, ...engine } = options;
  const replicas: SimServer[] = [];
  try {
    // Each replica its own seed: their noise and natural lengths differ as real replicas' do.
    for (let i = 0; i < n; i++) replicas.push(await startSimServer({ ...engine, host: '127.0.0.1', port: 0, seed: (engine.seed ?? 1) + i }));
  } catch (err) {
    await Promise.all(replicas.map((r) => r.close()));
    throw err;
  }
  const router = new SimRouter(n, policy);
  const routed = new Array<number>(n).fill(0);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const server: Server = createServer({ keepAlive: true, noDelay: true, requestTimeout: 0 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'GET' && (req.url ?? '').startsWith('/metrics')) return void sumMetrics(replicas, agent).then((text) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(text), () => res.writeHead(502).end());
      let parsed: unknown;
      if (req.method === 'POST' && body.length > 0) {
        try {
          parsed = JSON.parse(body.toString('utf8'));
        } catch {
          parsed = undefined;
        }
      }
      const generation = req.method === 'POST' && !/tokenize/.test(req.url ?? '');
      const i = generation ? router.pick(promptText(parsed)) : 0;
      if (generation) {
        routed[i] = (routed[i] as number) + 1;
        router.started(i);
      }
      let ended = false;
      const end = (): void => {
        if (generation && !ended) router.ended(i);
        ended = true;
      };
      forward(replicas[i] as SimServer, req, body, res, i, agent, end);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE' ? configError(`port ${port} on ${host} is in use`, 'pick another --port') : err));
    server.listen({ host, port, backlog: 4096 }, resolve);
  }).catch(async (err: unknown) => {
    await Promise.all(replicas.map((r) => r.close()));
    throw err;
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    port: bound,
    replicas,
    routed: () => [...routed],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      await Promise.all(replicas.map((r) => r.close()));
    },
  };
}

/** The request to replica `i`, its reply streamed back with the router's choice in a header. */
function forward(to: SimServer, req: IncomingMessage, body: Buffer, res: ServerResponse, i: number, agent: Agent, end: () => void): void {
  const headers = { ...req.headers, host: `127.0.0.1:${to.port}`, 'content-length': String(body.length) };
  delete headers['connection'];
  const up = httpRequest({ host: '127.0.0.1', port: to.port, method: req.method, path: req.url, headers, agent }, (reply) => {
    res.writeHead(reply.statusCode ?? 502, { ...reply.headers, [REPLICA_HEADER]: String(i) });
    reply.pipe(res);
    reply.on('end', end);
    reply.on('error', end);
  });
  up.on('error', () => {
    end();
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json', [REPLICA_HEADER]: String(i) }).end('{"error":"replica unreachable"}');
    else res.destroy();
  });
  // The client went away: the replica's request goes too (it cancels the generation).
  res.on('close', () => {
    if (!res.writableFinished) up.destroy();
    end();
  });
  up.end(body);
}

/**
 * One /metrics for the cluster: counters and request gauges summed, usage and rate gauges averaged over replicas. The
 * simulated GPUs' DCGM power lines are not summed but listed, each replica's GPUs numbered on after the previous
 * replica's (as one DCGM exporter lists a node's GPUs), so `run --power auto` counts every replica's GPUs.
 */
async function sumMetrics(replicas: readonly SimServer[], agent: Agent): Promise<string> {
  const texts = await Promise.all(replicas.map((r) => getText(`${r.url}/metrics`, agent)));
  const sums = new Map<string, number>();
  const order: string[] = [];
  const meta: string[] = [];
  let gpuOffset = 0;
  for (const text of texts) {
    let gpusHere = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith('#')) {
        if (!meta.includes(line)) meta.push(line);
        continue;
      }
      // A label value may hold spaces (`modelName="NVIDIA H100"`): the key runs to the closing brace.
      const m = /^(\S+?(?:\{[^}]*\})?)\s+(\S+)/.exec(line);
      if (!m) continue;
      const [, named, value] = m as unknown as [string, string, string];
      let key = named;
      if (key.startsWith('DCGM_')) {
        const gpu = Number(/[{,]gpu="(\d+)"/.exec(key)?.[1] ?? 0);
        gpusHere = Math.max(gpusHere, gpu + 1);
        const n = gpuOffset + gpu;
        key = key.replace(/([{,])gpu="\d+"/, `$1gpu="${n}"`).replace(/GPU-inferbench-sim-\d+/, `GPU-inferbench-sim-${n}`).replace(/device="nvidia\d+"/, `device="nvidia${n}"`);
      }
      if (!sums.has(key)) order.push(key);
      sums.set(key, (sums.get(key) ?? 0) + Number(value));
    }
    gpuOffset += gpusHere;
  }
  const averaged = (key: string): boolean => /_perc|usage|hit_rate|_ratio/.test(key.split('{')[0] ?? key);
  const lines = order.map((key) => `${key} ${averaged(key) ? (sums.get(key) as number) / replicas.length : (sums.get(key) as number)}`);
  return `${meta.join('\n')}\n${lines.join('\n')}\n`;
}

function getText(url: string, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { agent }, (res) => {
      let s = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (s += c));
      res.on('end', () => resolve(s));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}
