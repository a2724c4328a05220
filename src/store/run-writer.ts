import { createWriteStream, mkdirSync, renameSync, writeFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { RequestRecord } from '../metrics/record.js';
import { applyRecordPolicy, type RecordPolicy } from './record-policy.js';

export const SCHEMA_VERSION = 1;

/**
 * One run folder: manifest.json (config and metadata, written first), requests.jsonl (appended as requests
 * finish, batched so the hot path never waits on the disk), summary.json and tables at the end.
 */
export class RunWriter {
  readonly dir: string;
  private readonly stream: WriteStream;
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    dir: string,
    private readonly policy?: RecordPolicy,
  ) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
    this.stream = createWriteStream(join(dir, 'requests.jsonl'), { flags: 'a' });
  }

  writeJson(name: string, value: unknown): void {
    this.writeText(name, JSON.stringify({ schemaVersion: SCHEMA_VERSION, ...(value as object) }, null, 2) + '\n');
  }

  /**
   * Whole files (summary.json is rewritten after every row) go through a temporary file and a rename, so a reader —
   * `ls`, `report`, the dashboard, `--resume` after a crash — never sees half of one.
   */
  writeText(name: string, text: string): void {
    const path = join(this.dir, name);
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  }

  appendRecord(full: RequestRecord): void {
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
    if (this.pending.length === 0) return;
    this.stream.write(this.pending.join('\n') + '\n');
    this.pending = [];
  }

  /** Flush and close requests.jsonl; resolves when the bytes are on disk. */
  close(): Promise<void> {
    this.flush();
    return new Promise((resolve, reject) => this.stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }

  /** Synchronous last-chance flush for a hard exit (second Ctrl-C). */
  flushSync(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.pending.length > 0) {
      writeFileSync(join(this.dir, 'requests.jsonl'), this.pending.join('\n') + '\n', { flag: 'a' });
      this.pending = [];
    }
  }
}

/** `./inferbench-results/20261122-071500-label` style folder name. */
export function defaultRunDir(root: string, label: string | undefined, date = new Date()): string {
  const stamp = date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const safe = label ? `-${label.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60)}` : '';
  return join(root, `${stamp}${safe}`);
}
