/**
 * Worker-thread entry for the embedded simulator: the default `inferbench run` serves the sim from its
 * own event loop, so the sim's token writes never delay the client's timestamps (and vice versa).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startSimServer, type SimServerOptions } from '../sim/server/index.js';
import { kvCacheSuffix } from '../config/kv-cache-dtype.js';

const server = await startSimServer(workerData as SimServerOptions);
const d = server.description;
parentPort?.postMessage({ url: server.url, description: `${d.engineLabel}, ${d.model}${d.quant !== 'fp16' ? ` (${d.quant})` : ''}, ${d.gpus}× ${d.gpu}${kvCacheSuffix(d.kvCacheDtype)}` });
parentPort?.on('message', (msg: unknown) => {
  if (msg === 'close') void server.close().then(() => parentPort?.close());
});
