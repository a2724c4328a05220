import { closeSync, fdatasync, fstatSync, ftruncateSync, mkdirSync, openSync, renameSync, rmSync, write, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ImportedRecord, RequestRecord } from '../results/record.js';
import { applyRecordPolicy, type RecordPolicy } from './record-policy.js';
import { describeWriteFailure, writeFailureError, type WriteFailure } from './write-errors.js';

export const SCHEMA_VERSION = 1;

/**
 * Test hook, for tests only: `INFERBENCH_TEST_DISK_FULL_AFTER=N` lets N bytes of requests.jsonl reach the file, then
 * sends the rest of that write and every later write of this writer to /dev/full, whose writes fail with a real
 * ENOSPC from the kernel — the short write then ENOSPC that a filling disk gives, without needing a small disk.
 */
const DISK_FULL_AFTER_ENV = 'INFERBENCH_TEST_DISK_FULL_AFTER';

export interface RunWriterOptions {
  /**
   * Called once, at the first write that fails (disk full, I/O error …): the writer keeps whole records only, writes
   * nothing more, and throws nothing; the caller stops and reports. Without it, a failed write throws (one line).
   */
  onFailure?: (failure: WriteFailure) => void;
}

/**
 * One run folder: manifest.json (config and metadata, written first), requests.jsonl (appended as requests
 * finish, batched so the hot path never waits on the disk), summary.json and tables at the end.
 * requests.jsonl only ever holds whole lines: a write that fails part-way is cut back to its last whole record.
 */
export class RunWriter {
  readonly dir: string;
  /** The first write that failed; nothing is written after it. */
  failure: WriteFailure | undefined;
  private readonly requestsPath: string;
  private readonly fd: number;
  /** Bytes of requests.jsonl that are whole records. */
  private size: number;
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Batches are written one after another, off the caller's path. */
  private writing: Promise<void> = Promise.resolve();
  private budget = testBudget();

  constructor(
    dir: string,
    private readonly policy?: RecordPolicy,
    private readonly opts: RunWriterOptions = {},
  ) {
    this.dir = dir;
    this.requestsPath = join(dir, 'requests.jsonl');
    try {
      mkdirSync(dir, { recursive: true });
      this.fd = openSync(this.requestsPath, 'a');
      this.size = fstatSync(this.fd).size;
    } catch (err) {
      throw writeFailureError(describeWriteFailure(this.requestsPath, err));
    }
  }

  writeJson(name: string, value: unknown): void {
    this.writeText(name, JSON.stringify({ schemaVersion: SCHEMA_VERSION, ...(value as object) }, null, 2) + '\n');
  }

  /**
   * Whole files (summary.json is rewritten after every row) go through a temporary file and a rename, so a reader —
   * `ls`, `report`, the dashboard, `--resume` after a crash — never sees half of one.
   */
  writeText(name: string, text: string): void {
    if (this.failure) return;
    const path = join(this.dir, name);
    try {
      if (this.budget !== undefined && this.budget <= 0) writeFileSync('/dev/full', text);
      writeFileSync(`${path}.tmp`, text);
      renameSync(`${path}.tmp`, path);
    } catch (err) {
      rmSync(`${path}.tmp`, { force: true });
      const failure = this.fail(path, err);
      if (!this.opts.onFailure) throw writeFailureError(failure);
    }
  }

  appendRecord(full: RequestRecord): void {
    if (this.failure) return;
    const record = this.policy ? applyRecordPolicy(this.policy, full) : full;
    if (!record) return;
    // Every line carries the schema version, so a line copied out of its run still says how to read it.
    this.pending.push(`{"schemaVersion":${SCHEMA_VERSION},${JSON.stringify(record).slice(1)}`);
    if (this.pending.length >= 1000) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), 250);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0 || this.failure) return;
    const batch = Buffer.from(this.pending.join('\n') + '\n');
    this.pending = [];
    this.writing = this.writing.then(() => this.writeBatch(batch));
  }

  /**
   * Every record appended so far onto the disk: written, then synced (fdatasync). Resolves true when they all are,
   * false when a write or the sync failed (recorded as `failure`; onFailure was told). A file that vouches for the
   * records — summary.json calling a row finished — is written after this says true, never before: a full disk at a
   * row's last flush then leaves the row unfinished (`--resume` runs it again), and, synced before that file's rename
   * is even issued, the records cannot be lost by a crash that keeps the file.
   */
  async syncRecords(): Promise<boolean> {
    this.flush();
    await this.writing;
    if (this.failure) return false;
    try {
      await new Promise<void>((resolve, reject) => fdatasync(this.fd, (err) => (err ? reject(err) : resolve())));
    } catch (err) {
      this.fail(this.requestsPath, err);
      return false;
    }
    return true;
  }

  /** Flush and close requests.jsonl; resolves when the bytes are on disk (rejects on a failed write without onFailure). */
  async close(): Promise<void> {
    this.flush();
    await this.writing;
    closeSync(this.fd);
    if (this.failure && !this.opts.onFailure) throw writeFailureError(this.failure);
  }

  /**
   * Whole-folder writers (store/run-folder.ts): every record at once, synchronously, in batches of 1000 lines, then
   * the file is closed. Whole lines only, as with appendRecord: a failed write is cut back to the last whole record.
   */
  writeRecordsSync(records: Iterable<RequestRecord | ImportedRecord>): void {
    let lines: string[] = [];
    const writeLines = (): void => {
      if (lines.length === 0 || this.failure) return;
      const batch = Buffer.from(lines.join('\n') + '\n');
      lines = [];
      let done = 0;
      try {
        while (done < batch.length) {
          if (this.budget !== undefined && this.budget <= 0) throw devFullError(batch, done);
          const length = this.budget !== undefined ? Math.min(batch.length - done, this.budget) : batch.length - done;
          const written = writeSync(this.fd, batch, done, length);
          if (this.budget !== undefined) this.budget -= written;
          done += written;
        }
        this.size += batch.length;
      } catch (err) {
        this.cutBack(batch, done, err);
      }
    };
    for (const full of records) {
      if (this.failure) break;
      const record = this.policy ? applyRecordPolicy(this.policy, full as RequestRecord) : full;
      if (!record) continue;
      lines.push(`{"schemaVersion":${SCHEMA_VERSION},${JSON.stringify(record).slice(1)}`);
      if (lines.length >= 1000) writeLines();
    }
    writeLines();
    closeSync(this.fd);
    if (this.failure && !this.opts.onFailure) throw writeFailureError(this.failure);
  }

  /** Synchronous last-chance flush for a hard exit (second Ctrl-C): whole lines or nothing more. */
  flushSync(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.pending.length > 0 && !this.failure) {
      const batch = Buffer.from(this.pending.join('\n') + '\n');
      this.pending = [];
      try {
        writeSync(this.fd, batch);
      } catch {
        ftruncateSafe(this.fd, this.size);
      }
    }
  }

  /** A write into this folder that failed elsewhere (the report files): recorded as the writer's own. */
  recordFailure(path: string, err: unknown): void {
    this.fail(path, err);
  }

  /** Writes one batch, all of it; on a failure the file is cut back to the last whole line that reached it. */
  private async writeBatch(batch: Buffer): Promise<void> {
    if (this.failure) return;
    let done = 0;
    try {
      while (done < batch.length) done += await this.writeSome(batch, done);
      this.size += batch.length;
    } catch (err) {
      this.cutBack(batch, done, err);
    }
  }

  /** A batch write failed after `done` bytes: keep its whole lines only, and record the failure. */
  private cutBack(batch: Buffer, done: number, err: unknown): void {
    const lastNewline = done > 0 ? batch.lastIndexOf(0x0a, done - 1) : -1;
    this.size += lastNewline + 1;
    ftruncateSafe(this.fd, this.size);
    this.fail(this.requestsPath, err);
  }

  /** One write(2) of what is left of `batch` from `offset`; resolves with the bytes written (may be fewer). */
  private writeSome(batch: Buffer, offset: number): Promise<number> {
    let length = batch.length - offset;
    if (this.budget !== undefined) {
      // The test hook's full disk fails at once, so the file it names does not depend on what else is being written.
      if (this.budget <= 0) return Promise.reject(devFullError(batch, offset));
      length = Math.min(length, this.budget);
    }
    return new Promise((resolve, reject) =>
      write(this.fd, batch, offset, length, null, (err, written) => {
        if (err) return reject(err);
        if (this.budget !== undefined) this.budget -= written;
        resolve(written);
      }),
    );
  }

  /** Records the first failure and tells the caller; never throws (it also runs inside the write chain). */
  private fail(path: string, err: unknown): WriteFailure {
    if (this.failure) return this.failure;
    const failure = describeWriteFailure(path, err);
    this.failure = failure;
    this.pending = [];
    this.opts.onFailure?.(failure);
    return failure;
  }
}

function ftruncateSafe(fd: number, size: number): void {
  try {
    ftruncateSync(fd, size);
  } catch {
    // Nothing more can be done; the records reader skips a cut last line.
  }
}

/** The real error of a write to /dev/full (ENOSPC). */
function devFullError(batch: Buffer, offset: number): unknown {
  const fd = openSync('/dev/full', 'w');
  try {
    writeSync(fd, batch, offset);
    return new Error('/dev/full accepted a write');
  } catch (err) {
    return err;
  } finally {
    closeSync(fd);
  }
}

/** The test hook's byte budget (INFERBENCH_TEST_DISK_FULL_AFTER), for writers of other run folders (import). */
export function testDiskFullBudget(): number | undefined {
  return testBudget();
}

function testBudget(): number | undefined {
  const raw = process.env[DISK_FULL_AFTER_ENV];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** `./inferbench-results/20261122-071500-label` style folder name. */
export function defaultRunDir(root: string, label: string | undefined, date = new Date()): string {
  const stamp = date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const safe = label ? `-${label.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60)}` : '';
  return join(root, `${stamp}${safe}`);
}
