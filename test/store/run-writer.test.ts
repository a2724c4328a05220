import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InferbenchError } from '../../src/core/errors.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { RunWriter } from '../../src/store/run-writer.js';
import { describeWriteFailure, type WriteFailure } from '../../src/store/write-errors.js';

// Writes that fail for real: /dev/full accepts open(2) and fails every write(2) with ENOSPC (Linux).
const record = (id: number): RequestRecord =>
  ({ id, stage: 0, warmup: false, status: 'ok', scheduledAtMs: id, sentAtMs: id, dispatchLagMs: 0, clientQueueMs: 0, endAtMs: id + 1, chunkGapsMs: Array.from({ length: 20 }, (_, i) => i * 1.5) }) as unknown as RequestRecord;

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'inferbench-writer-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  delete process.env['INFERBENCH_TEST_DISK_FULL_AFTER'];
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('RunWriter on a failing disk', () => {
  it('reports a full disk once, naming the file, instead of an unhandled stream error', async () => {
    const dir = tempDir();
    symlinkSync('/dev/full', join(dir, 'requests.jsonl'));
    const failures: WriteFailure[] = [];
    const writer = new RunWriter(dir, undefined, { onFailure: (f) => failures.push(f) });
    for (let i = 0; i < 5; i++) writer.appendRecord(record(i));
    writer.flush();
    writer.appendRecord(record(5));
    await writer.close();
    expect(failures).toHaveLength(1);
    expect(failures[0]?.code).toBe('ENOSPC');
    expect(failures[0]?.message).toBe(`cannot write ${join(dir, 'requests.jsonl')}: the disk is full (ENOSPC)`);
    // Nothing is written after the failure.
    writer.writeJson('summary.json', { stages: [] });
    expect(existsSync(join(dir, 'summary.json'))).toBe(false);
  });

  it('without a failure handler, close() rejects with a one-line error', async () => {
    const dir = tempDir();
    symlinkSync('/dev/full', join(dir, 'requests.jsonl'));
    const writer = new RunWriter(dir);
    writer.appendRecord(record(0));
    const err = await writer.close().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(InferbenchError);
    expect((err as Error).message).toBe(`cannot write ${join(dir, 'requests.jsonl')}: the disk is full (ENOSPC)`);
  });

  it('a whole file that cannot be written leaves neither it nor its temporary file', () => {
    const dir = tempDir();
    symlinkSync('/dev/full', join(dir, 'summary.json.tmp'));
    const failures: WriteFailure[] = [];
    const writer = new RunWriter(dir, undefined, { onFailure: (f) => failures.push(f) });
    writer.writeJson('summary.json', { stages: [] });
    expect(failures.map((f) => f.message)).toEqual([`cannot write ${join(dir, 'summary.json')}: the disk is full (ENOSPC)`]);
    expect(existsSync(join(dir, 'summary.json'))).toBe(false);
    expect(existsSync(join(dir, 'summary.json.tmp'))).toBe(false);
  });

  it('a disk that fills part-way through a batch leaves whole records only (the cut one removed)', async () => {
    const dir = tempDir();
    const budget = 1500; // bytes that reach the file before the writes go to /dev/full (run-writer.ts test hook)
    process.env['INFERBENCH_TEST_DISK_FULL_AFTER'] = String(budget);
    const failures: WriteFailure[] = [];
    const writer = new RunWriter(dir, undefined, { onFailure: (f) => failures.push(f) });
    for (let i = 0; i < 40; i++) writer.appendRecord(record(i));
    await writer.close();
    expect(failures.map((f) => f.code)).toEqual(['ENOSPC']);
    const text = readFileSync(join(dir, 'requests.jsonl'), 'utf8');
    expect(statSync(join(dir, 'requests.jsonl')).size).toBeLessThanOrEqual(budget);
    expect(text.endsWith('\n')).toBe(true);
    const ids = text.trimEnd().split('\n').map((l) => (JSON.parse(l) as RequestRecord).id);
    // The records that fit whole, in order; the one the disk cut is gone.
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual(ids.map((_, i) => i));
    const oneLine = Buffer.byteLength(text) / ids.length;
    expect(budget - Buffer.byteLength(text)).toBeLessThan(oneLine);
  });

  it('writeRecordsSync (the whole-folder writer) also keeps whole records only, and throws one line without a handler', () => {
    const dir = tempDir();
    const budget = 1500;
    process.env['INFERBENCH_TEST_DISK_FULL_AFTER'] = String(budget);
    const writer = new RunWriter(dir);
    let error: unknown;
    try {
      writer.writeRecordsSync(Array.from({ length: 40 }, (_, i) => record(i)));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InferbenchError);
    expect((error as Error).message).toContain('requests.jsonl');
    const text = readFileSync(join(dir, 'requests.jsonl'), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const ids = text.trimEnd().split('\n').map((l) => (JSON.parse(l) as RequestRecord).id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual(ids.map((_, i) => i));
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(budget);
  });
});

describe('write failures in one line', () => {
  it('names the file, what the error means and what to do, for the errors a disk gives mid-run', () => {
    const fsError = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: failed, write`), { code, syscall: 'write' });
    expect(describeWriteFailure('/r/requests.jsonl', fsError('EIO')).message).toBe('cannot write /r/requests.jsonl: the disk reported an I/O error (EIO)');
    expect(describeWriteFailure('/r/requests.jsonl', fsError('EDQUOT')).message).toBe('cannot write /r/requests.jsonl: your disk quota is used up (EDQUOT)');
    expect(describeWriteFailure('/r/summary.json', fsError('EROFS')).message).toBe('cannot write /r/summary.json: the file system became read-only (EROFS)');
    expect(describeWriteFailure('/r/summary.json', fsError('EROFS')).todo).toMatch(/give --out a writable folder/);
  });
});
