/** Small helpers shared by the benches: exact quantiles, a plain table, machine facts. */
import { cpus, loadavg } from 'node:os';

export interface Dist {
  n: number;
  min: number;
  p1: number;
  p50: number;
  p99: number;
  max: number;
}

export function dist(values: ArrayLike<number>): Dist {
  const s = Float64Array.from(values).sort();
  const n = s.length;
  const q = (p: number): number => (n ? (s[Math.min(n - 1, Math.ceil(p * n) - 1)] ?? 0) : Number.NaN);
  return { n, min: n ? (s[0] as number) : Number.NaN, p1: q(0.01), p50: q(0.5), p99: q(0.99), max: n ? (s[n - 1] as number) : Number.NaN };
}

export function fmt(x: number, digits = 3): string {
  return Number.isFinite(x) ? x.toFixed(digits) : '—';
}

export function table(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => '| ' + cells.map((c, i) => c.padStart(w[i] ?? 0)).join(' | ') + ' |';
  return [line(head), '|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|', ...rows.map(line)].join('\n');
}

export function machine(): Record<string, unknown> {
  const c = cpus();
  return { node: process.version, cpus: c.length, cpuModel: c[0]?.model ?? 'unknown', loadavgAtStart: loadavg(), platform: process.platform };
}

export function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}
