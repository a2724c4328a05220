import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A dashboard serving a results folder leaves `.inferbench-ui.json` in it: a run writing into that folder reads
 * it and feeds its progress to the dashboard. The token keeps web pages (which cannot read the file) from posting
 * to the feed endpoint; the pid lets a run tell a live dashboard from a file left by one that was killed.
 */
export const MARKER_FILE = '.inferbench-ui.json';

export interface DashboardMarker {
  pid: number;
  url: string;
  token: string;
  results: string;
  startedAt: string;
}

export function newToken(): string {
  return randomBytes(18).toString('base64url');
}

export function writeMarker(resultsDir: string, marker: DashboardMarker): void {
  writeFileSync(join(resultsDir, MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`, { mode: 0o600 });
}

/** Removes the marker only while it is still ours (a second dashboard on the same folder may have replaced it). */
export function removeMarker(resultsDir: string, token: string): void {
  if (readMarker(resultsDir, { checkPid: false })?.token === token) rmSync(join(resultsDir, MARKER_FILE), { force: true });
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The dashboard serving `resultsDir`, if one is (a marker whose process is gone is ignored). */
export function readMarker(resultsDir: string, opts: { checkPid?: boolean } = {}): DashboardMarker | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(resultsDir, MARKER_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  const m = raw as Partial<DashboardMarker>;
  if (typeof m.pid !== 'number' || typeof m.url !== 'string' || typeof m.token !== 'string') return undefined;
  if (!/^http:\/\/127\.0\.0\.1:\d+\/$/.test(m.url)) return undefined;
  if (opts.checkPid !== false && !pidAlive(m.pid)) return undefined;
  return { pid: m.pid, url: m.url, token: m.token, results: String(m.results ?? resultsDir), startedAt: String(m.startedAt ?? '') };
}
