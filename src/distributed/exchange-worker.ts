/**
 * A load worker thread: its own event loop and undici pool, sending the requests the coordinator hands it and
 * sending back what it observed, every stamp already moved onto the coordinator's clock. The per-token work
 * (reads, framing, stamping) happens here; records, windows and files stay with the coordinator.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { sleepUntil } from '../core/clock.js';
import { getDialect } from '../dialects/index.js';
import { HttpTarget } from '../transport/http.js';
import { REPLY_NOTE_MS } from '../transport/exchange-recorder.js';
import type { Exchange } from '../transport/exchange.js';
import { measureClockBase, offsetMs } from './clock-offset.js';
import type { FromWorker, ToWorker, WorkerSetup } from './protocol.js';

const setup = workerData as WorkerSetup;
const port = parentPort;
if (!port) throw new Error('exchange-worker.ts runs only as a worker thread');

const target = new HttpTarget({
  baseUrl: setup.baseUrl,
  connections: setup.connections,
  ...(setup.timeouts ? { timeouts: setup.timeouts } : {}),
  ...(setup.apiKey ? { apiKey: setup.apiKey } : {}),
  ...(setup.replicaHeader ? { replicaHeader: setup.replicaHeader } : {}),
});
const clock = measureClockBase();
/** Worker stamp + toCoordinator = the coordinator's performance.now() at the same instant. */
const toCoordinator = offsetMs(clock, setup.coordinatorClock);
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
const elu0 = performance.eventLoopUtilization();
let requests = 0;

const post = (msg: FromWorker): void => port.postMessage(msg);
/** When this worker last said a request received reply bytes: one such message per REPLY_NOTE_MS is enough. */
let repliedAt = -Infinity;
const noteReply = (id: number): void => {
  const now = performance.now();
  if (now - repliedAt < REPLY_NOTE_MS) return;
  repliedAt = now;
  post({ type: 'reply', id });
};

function shift(ex: Exchange, d: number): Exchange {
  ex.sentAtMs += d;
  ex.endAtMs += d;
  if (ex.dispatchedAtMs !== undefined) ex.dispatchedAtMs += d;
  if (ex.headersAtMs !== undefined) ex.headersAtMs += d;
  if (ex.firstAnswerAtMs !== undefined) ex.firstAnswerAtMs += d;
  const times = ex.contentTimesMs;
  for (let i = 0; i < times.length; i++) times[i] = (times[i] as number) + d;
  return ex;
}

async function handleSend(msg: Extract<ToWorker, { type: 'send' }>): Promise<void> {
  requests++;
  if (msg.notBeforeMs !== undefined) await sleepUntil(msg.notBeforeMs - toCoordinator);
  const ex = await target.send(msg.plan, getDialect(msg.api), msg.request, undefined, msg.notifyReply ? { onReply: () => noteReply(msg.id) } : undefined);
  // The text is needed only where the server did not count the tokens, or a conversation resends the reply.
  if (!msg.keepText && (ex.usage?.outputTokens !== undefined || ex.frameTokens !== undefined)) ex.textParts = [];
  post({ type: 'exchange', id: msg.id, exchange: shift(ex, toCoordinator) });
}

port.on('message', (msg: ToWorker) => {
  switch (msg.type) {
    case 'send':
      void handleSend(msg);
      break;
    case 'abort-all':
      target.abortAll(msg.reason);
      break;
    case 'stats': {
      const elu = performance.eventLoopUtilization(elu0);
      post({
        type: 'stats',
        stats: {
          index: setup.index,
          eventLoopUtilization: elu.utilization,
          eventLoopDelayP99Ms: loopDelay.count > 0 ? Math.max(0, loopDelay.percentile(99) / 1e6 - 5) : 0,
          requests,
        },
      });
      break;
    }
    case 'close':
      void target.close().then(() => {
        post({ type: 'closed' });
        port.close();
      });
      break;
  }
});

post({ type: 'ready', clock, residualNs: clock.residualNs + setup.coordinatorClock.residualNs });
