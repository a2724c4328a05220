/**
 * Worker-thread entry for `inferbench plan`: evaluates candidates (capacity search + operating point) sent by
 * the main thread. The job settings arrive once as workerData; each message is one candidate shape.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadCatalogFile } from '../sim/catalog/load-file.js';
import { evaluateCandidate } from './evaluate.js';
import type { CandidateShape, PlanJobSettings } from './types.js';

const job = workerData as PlanJobSettings;
// The catalog registry is per thread: models and GPUs added by --catalog must be added here too.
for (const file of job.catalogFiles) loadCatalogFile(file);

parentPort?.on('message', (msg: { id: number; shape: CandidateShape } | 'close') => {
  if (msg === 'close') {
    parentPort?.close();
    return;
  }
  evaluateCandidate(job, msg.shape).then(
    (result) => parentPort?.postMessage({ id: msg.id, result }),
    (err: unknown) => {
      const e = err as { message?: string; code?: string; hint?: string };
      parentPort?.postMessage({ id: msg.id, error: { message: e.message ?? String(err), code: e.code, hint: e.hint } });
    },
  );
});
parentPort?.postMessage('ready');
