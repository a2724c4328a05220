import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { failureText } from '../store/requests-reader.js';

/** Most bytes read per call: a run that wrote a lot between two posts is caught up over the next few. */
const MAX_READ = 4 * 1024 * 1024;

export interface TailRecord {
  ok: boolean;
  stage: number;
  sentAtMs?: number;
  ttftMs?: number;
  error?: string;
}

/**
 * Follows a live run's requests.jsonl (the run writes it in batches, off its hot path): each call returns the
 * complete lines added since the last. The dashboard reads per-request values from the file, so the run itself
 * never does per-request work for the dashboard.
 */
export class RequestsTail {
  private offset = 0;
  private rest = '';

  constructor(private readonly dir: string) {}

  async next(): Promise<TailRecord[]> {
    let handle;
    try {
      handle = await open(join(this.dir, 'requests.jsonl'), 'r');
    } catch {
      return [];
    }
    try {
      const { size } = await handle.stat();
      if (size < this.offset) {
        // Replaced (a new run in the same folder): start over.
        this.offset = 0;
        this.rest = '';
      }
      const length = Math.min(size - this.offset, MAX_READ);
      if (length <= 0) return [];
      const buf = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buf, 0, length, this.offset);
      this.offset += bytesRead;
      const text = this.rest + buf.subarray(0, bytesRead).toString('utf8');
      const cut = text.lastIndexOf('\n');
      this.rest = cut < 0 ? text : text.slice(cut + 1);
      return cut < 0 ? [] : parseLines(text.slice(0, cut));
    } finally {
      await handle.close();
    }
  }
}

function parseLines(text: string): TailRecord[] {
  const out: TailRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (r['warmup'] === true) continue;
    const stage = typeof r['stage'] === 'number' ? r['stage'] : 0;
    if (r['status'] === 'ok') {
      out.push({
        ok: true,
        stage,
        ...(typeof r['sentAtMs'] === 'number' ? { sentAtMs: r['sentAtMs'] } : {}),
        ...(typeof r['ttftMs'] === 'number' ? { ttftMs: r['ttftMs'] } : {}),
      });
    } else {
      out.push({ ok: false, stage, error: failureText(r) });
    }
  }
  return out;
}
