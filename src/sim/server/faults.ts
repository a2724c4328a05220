/**
 * Fault injection for the sim server. A spec like
 * `429:0.05,500:0.01,503:0.01,reset:0.02,stall:0.01,malformed:0.01,truncate:0.01,slow-first-byte:0.02,stall-ms:2000`
 * gives per-request probabilities (mutually exclusive, summing to ≤ 1) plus parameters. Each
 * generation request's fault is a pure function of (seed, request index), so a run is reproducible
 * whatever the interleaving of concurrent requests.
 */
import { configError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type FaultKind = '429' | '500' | '503' | 'reset' | 'stall' | 'malformed' | 'truncate' | 'slow-first-byte';

export const FAULT_KINDS: readonly FaultKind[] = ['429', '500', '503', 'reset', 'stall', 'malformed', 'truncate', 'slow-first-byte'];

export interface FaultSpec {
  rates: Partial<Record<FaultKind, number>>;
  /** How long a stalled stream stops writing (ms). */
  stallMs: number;
  /** Delay before the first byte (headers) of a slow-first-byte response (ms). */
  slowMs: number;
  /** Retry-After header value on 429 replies (seconds). */
  retryAfterS: number;
}

const PARAMS = { 'stall-ms': 'stallMs', 'slow-ms': 'slowMs', 'retry-after': 'retryAfterS' } as const;

export const NO_FAULTS: FaultSpec = { rates: {}, stallMs: 2000, slowMs: 1000, retryAfterS: 1 };

/** Parse a fault spec; throws configError with a one-line message on any mistake. */
export function parseFaultSpec(text: string): FaultSpec {
  const spec: FaultSpec = { rates: {}, stallMs: NO_FAULTS.stallMs, slowMs: NO_FAULTS.slowMs, retryAfterS: NO_FAULTS.retryAfterS };
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'none') return spec;
  let total = 0;
  for (const part of trimmed.split(',')) {
    const item = part.trim();
    const colon = item.lastIndexOf(':');
    if (colon <= 0) throw configError(`invalid fault spec item "${item}": expected KIND:VALUE`, `kinds: ${FAULT_KINDS.join(', ')}; params: ${Object.keys(PARAMS).join(', ')}`);
    const key = item.slice(0, colon).trim();
    const raw = item.slice(colon + 1).trim();
    const value = raw === '' ? Number.NaN : Number(raw);
    if ((FAULT_KINDS as readonly string[]).includes(key)) {
      if (!(value >= 0 && value <= 1)) throw configError(`invalid fault rate "${item}": the rate must be a number in [0, 1]`);
      if (spec.rates[key as FaultKind] !== undefined) throw configError(`fault "${key}" is given twice`);
      spec.rates[key as FaultKind] = value;
      total += value;
    } else if (key in PARAMS) {
      if (!(value >= 0 && Number.isFinite(value))) throw configError(`invalid fault parameter "${item}": expected a non-negative number`);
      spec[PARAMS[key as keyof typeof PARAMS]] = value;
    } else {
      throw configError(`unknown fault "${key}"`, `kinds: ${FAULT_KINDS.join(', ')}; params: ${Object.keys(PARAMS).join(', ')}`);
    }
  }
  if (total > 1 + 1e-9) throw configError(`fault rates add up to ${total.toFixed(3)}, more than 1`);
  return spec;
}

export function formatFaultSpec(spec: FaultSpec): string {
  const parts = FAULT_KINDS.filter((k) => (spec.rates[k] ?? 0) > 0).map((k) => `${k}:${spec.rates[k]}`);
  return parts.length ? [...parts, `stall-ms:${spec.stallMs}`, `slow-ms:${spec.slowMs}`, `retry-after:${spec.retryAfterS}`].join(',') : 'none';
}

export interface FaultDecision {
  kind: FaultKind;
  /** Where in the stream a mid-stream fault hits, as a fraction of the output (0..1). */
  at: number;
}

/** The fault for request `index`, or undefined. Pure in (spec, seed, index). */
export function decideFault(spec: FaultSpec, seed: number, index: number): FaultDecision | undefined {
  const rng = new Rng((Math.imul(index + 1, 0x9e3779b1) ^ Math.imul(seed | 0, 0x85ebca6b) ^ 0x2545f491) >>> 0);
  const u = rng.next();
  const at = rng.next();
  let acc = 0;
  for (const kind of FAULT_KINDS) {
    acc += spec.rates[kind] ?? 0;
    if (u < acc) return { kind, at };
  }
  return undefined;
}

/**
 * The token index at which a mid-stream fault fires: at least one token is written first when the
 * output has more than one token, so the fault really is mid-stream.
 */
export function faultToken(at: number, target: number): number {
  if (target <= 1) return 0;
  return 1 + Math.min(target - 2, Math.floor(at * (target - 1)));
}

/** A connection reset (RST) where Node can send one, else a plain destroy. */
export function resetConnection(res: ServerResponse): void {
  const sock = res.socket as (Socket & { resetAndDestroy?: () => void }) | null;
  if (sock?.resetAndDestroy) sock.resetAndDestroy();
  else res.destroy();
}

/** A frame cut in half (its delimiter kept): what the malformed fault sends before the real frame. */
export function malformedFrame(frame: string, delimiter: string): string {
  const body = frame.slice(0, frame.length - delimiter.length);
  return body.slice(0, Math.max(1, Math.floor(body.length / 2))) + delimiter;
}

/** A non-streaming reply under a fault: how long to hold it and what is left of its body. */
export function wholeReplyFault(kind: FaultKind | undefined, body: string, faults: FaultSpec, arrivalMs: number, nowMs: number): { delayMs: number; body: string } {
  let delayMs = 0;
  if (kind === 'stall') delayMs = faults.stallMs;
  if (kind === 'slow-first-byte') delayMs = Math.max(0, arrivalMs + faults.slowMs - nowMs);
  const cut = kind === 'malformed' || kind === 'truncate';
  return { delayMs, body: cut ? body.slice(0, Math.floor(body.length / 2)) : body };
}
