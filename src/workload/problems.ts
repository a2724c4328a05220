import { readFile } from 'node:fs/promises';
import { configError } from '../core/errors.js';

const SHOWN = 20;

/** Collects every unusable line of an input file, so one error lists them all before any request is sent. */
export class Problems {
  private readonly lines: string[] = [];

  constructor(private readonly file: string) {}

  add(line: number, what: string): void {
    this.lines.push(`${this.file}:${line}: ${what}`);
  }

  get count(): number {
    return this.lines.length;
  }

  throwIfAny(hint: string): void {
    if (this.lines.length === 0) return;
    const shown = this.lines.slice(0, SHOWN);
    if (this.lines.length > SHOWN) shown.push(`... and ${this.lines.length - SHOWN} more`);
    const n = this.lines.length;
    throw configError(`${this.file}: ${n} unusable ${n === 1 ? 'entry' : 'entries'}\n  ${shown.join('\n  ')}`, hint);
  }
}

export async function readInput(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw configError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Non-empty lines with their 1-based numbers (CRLF tolerated). */
export function numberedLines(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  text.split('\n').forEach((raw, i) => {
    const t = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (t.trim() !== '') out.push({ line: i + 1, text: t });
  });
  return out;
}
