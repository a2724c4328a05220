/**
 * Worker-thread entry of sim-engines-worker.ts: serves the simulator from this thread's own event loop (as the
 * embedded sim of `inferbench run` does), so a run in the test's thread and the simulator never wait on each other.
 * Messages: { op: 'start', options } → { url }; { op: 'truth' } → { counts }; { op: 'close' } → {}.
 */
import { parentPort } from 'node:worker_threads';
import { startSimServer, type SimServer, type SimServerOptions } from '../../src/sim/server/index.js';

type Message = { op: 'start'; options: SimServerOptions } | { op: 'truth' } | { op: 'close' };
let server: SimServer | undefined;

parentPort?.on('message', (msg: Message) => {
  void (async () => {
    try {
      if (msg.op === 'start') {
        server = await startSimServer(msg.options);
        parentPort?.postMessage({ url: server.url });
      } else if (msg.op === 'truth') {
        // Every request the server finished (not aborted), as the number of tokens it generated.
        const counts = (server?.truth.finished() ?? []).filter((t) => t.finishReason !== 'abort').map((t) => t.plannedMs.length);
        parentPort?.postMessage({ counts });
      } else {
        await server?.close();
        server = undefined;
        parentPort?.postMessage({});
      }
    } catch (err) {
      parentPort?.postMessage({ error: String((err as Error)?.stack ?? err) });
    }
  })();
});
parentPort?.postMessage({ ready: true });
