/**
 * `GET /sim/v1/energy`: the simulator's own energy ledger (engine/power.ts), the truth a measured `run --power` is
 * checked against. Without a query: joules of all GPUs since the engine started and the power now. With
 * `?from=EPOCH_MS&to=EPOCH_MS` (wall-clock ms, as Date.now()): the joules of all GPUs between those two times.
 */
import { performance } from 'node:perf_hooks';
import type { RealTimeDriver } from '../des/real-time-driver.js';
import type { EnergyLedger } from '../engine/power.js';
import type { HttpReply } from '../wire/types.js';

const jsonReply = (status: number, body: unknown): HttpReply => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

export function energyReply(ledger: EnergyLedger | undefined, driver: RealTimeDriver, query: URLSearchParams): HttpReply {
  if (!ledger) return jsonReply(404, { error: 'this GPU has no power figures in the catalog: the simulator keeps no energy ledger' });
  const toEngineMs = (epochMs: number): number => driver.toVirtualMs(epochMs - performance.timeOrigin);
  const nowMs = driver.now();
  const base = { gpus: ledger.gpus, idleW: ledger.spec.idleW, maxW: ledger.spec.maxW, nowEpochMs: performance.timeOrigin + nowMs };
  const from = query.get('from');
  const to = query.get('to');
  if (from === null && to === null) return jsonReply(200, { ...base, joules: ledger.at(nowMs) * ledger.gpus, wattsPerGpu: ledger.currentWatts });
  const a = Number(from);
  const b = Number(to);
  if (!Number.isFinite(a) || !Number.isFinite(b) || !(b >= a)) return jsonReply(400, { error: 'from and to must be epoch milliseconds with from <= to' });
  return jsonReply(200, { ...base, fromEpochMs: a, toEpochMs: b, joules: ledger.between(toEngineMs(a), toEngineMs(b)) });
}
