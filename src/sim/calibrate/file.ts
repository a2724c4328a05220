/** Calibration files: what `predict --save-calibration FILE` writes and `--calibration FILE` reads. */
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { configError } from '../../core/errors.js';
import { DEFAULT_CALIBRATION } from './constants.js';
import type { Calibration } from './types.js';

const positive = z.number().positive().finite();
const hardware = z.object({ etaM: positive, etaC: positive, linkAlphaUs: positive, linkBetaGBs: positive, overlapP: z.number().min(1).max(8).optional() }).strict();
const engine = z.object({ c0Ms: positive, cSeqUs: positive, tApiMs: positive, etaMoe: positive.optional(), moeBw: positive.optional() }).strict();
const quant = z.object({ qc: positive, qm: positive }).strict();
const capacityFactor = z
  .object({
    engine: z.string(), model: z.string(), gpu: z.string(), gpus: z.number().int().positive(), quant: z.string(), kvCacheDtype: z.string().optional(),
    factor: positive, simulatedCapacity: positive, measuredCapacity: positive,
    slo: z.string(), workload: z.string(), runDir: z.string().optional(), measuredAt: z.string(),
  })
  .strict();
const spread = z.object({ bias: z.number().finite(), sd: z.number().nonnegative().finite(), se: z.number().nonnegative().finite(), n: z.number().int().positive(), noise: z.number().nonnegative().finite().optional() }).strict();
/** Written by `--calibrate-from RUN[,RUN…]` since prediction intervals; older files have none (then the published tables' residuals give the intervals). */
const intervals = z.object({
  spreads: z.record(z.enum(['ttft', 'itl', 'e2e', 'requestThroughput', 'outputTokenThroughput', 'all']), spread),
  runs: z.array(z.string()),
  deployment: z.object({ engine: z.string(), model: z.string(), gpu: z.string(), gpus: z.number() }).strict(),
}).strict();

/**
 * A full calibration as saved; a hand-written file may give only some entries, each entry whole (the rest come
 * from the built-in seed fit).
 */
const calibrationSchema = z
  .object({
    note: z.string().optional(),
    hardware: z.record(z.string(), hardware).optional(),
    engines: z.record(z.string(), engine).optional(),
    quant: z.record(z.string(), quant).optional(),
    etaMoe: positive.optional(),
    overlapP: z.number().min(1).max(8).optional(),
    fitted: z.array(z.string()).optional(),
    capacityFactors: z.array(capacityFactor).optional(),
    intervals: intervals.optional(),
  })
  .strict();

/** Reads a calibration file; a missing, unreadable or malformed file is one line (exit 2). */
export function loadCalibrationFile(path: string, flag = '--calibration'): Calibration {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw configError(`${flag} ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`, 'pass a file written by `inferbench predict --calibrate-from RUN --save-calibration FILE`');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw configError(`${flag} ${path} is not valid JSON (${(err as Error).message.split('\n')[0]})`, 'pass a file written by --save-calibration');
  }
  const parsed = calibrationSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw configError(`${flag} ${path} is not a calibration file (${issue?.message ?? 'invalid'}${at})`, 'expected {note, hardware, engines, quant, etaMoe, fitted} as --save-calibration writes it');
  }
  const c = parsed.data;
  const base = DEFAULT_CALIBRATION;
  const overlapP = c.overlapP ?? base.overlapP;
  return {
    note: c.note ?? `${path}`,
    hardware: { ...structuredClone(base.hardware), ...c.hardware },
    engines: { ...structuredClone(base.engines), ...c.engines },
    quant: { ...structuredClone(base.quant), ...c.quant },
    etaMoe: c.etaMoe ?? base.etaMoe,
    ...(overlapP !== undefined ? { overlapP } : {}),
    fitted: c.fitted ?? base.fitted,
    ...(c.capacityFactors !== undefined ? { capacityFactors: c.capacityFactors } : {}),
    ...(c.intervals ? { intervals: c.intervals } : {}),
  };
}

/** Writes a calibration as pretty JSON; a folder that cannot be written is one line. */
export function saveCalibrationFile(path: string, cal: Calibration): void {
  try {
    writeFileSync(path, `${JSON.stringify(cal, null, 2)}\n`);
  } catch (err) {
    throw configError(`--save-calibration ${path}: cannot write it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}
