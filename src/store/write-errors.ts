import { InferbenchError } from '../core/errors.js';

/** What a failed write into a run folder means, and what the user can do about it. */
const WRITE_ERRORS: Record<string, { why: string; todo: string }> = {
  ENOSPC: { why: 'the disk is full', todo: 'free some space (or give --out a folder on another disk)' },
  EDQUOT: { why: 'your disk quota is used up', todo: 'free some space (or give --out a folder on another disk)' },
  EFBIG: { why: 'the file grew past what the file system allows', todo: 'bound requests.jsonl with --records sample:0.1 or give --out another disk' },
  EROFS: { why: 'the file system became read-only', todo: 'check the disk (its kernel log), then give --out a writable folder' },
  EIO: { why: 'the disk reported an I/O error', todo: 'check the disk (its kernel log), then give --out a folder on a healthy disk' },
  EACCES: { why: 'no permission to write there', todo: 'give --out a folder you can write to' },
  EPERM: { why: 'no permission to write there', todo: 'give --out a folder you can write to' },
};

/** A write into a run folder that failed: the file, the errno code and what that means. */
export interface WriteFailure {
  path: string;
  code: string;
  /** `cannot write PATH: the disk is full (ENOSPC)` */
  message: string;
  /** What to do about it, in a few words. */
  todo: string;
}

/** Node's errors from the file system carry an errno code (`ENOSPC`) and the syscall that failed. */
export function isFsError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}

export function describeWriteFailure(path: string, err: unknown): WriteFailure {
  const code = isFsError(err) ? (err.code as string) : 'EUNKNOWN';
  const known = WRITE_ERRORS[code];
  const why = known?.why ?? (err instanceof Error ? err.message.split('\n')[0] : String(err));
  return { path, code, message: `cannot write ${path}: ${why}${known ? ` (${code})` : ''}`, todo: known?.todo ?? 'check the disk and the folder' };
}

/** The failure as an error `main` prints in one line (exit 1): for commands that have nothing to keep going for. */
export function writeFailureError(f: WriteFailure): InferbenchError {
  return new InferbenchError('E_INTERNAL', f.message, { hint: f.todo });
}
