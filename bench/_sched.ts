/**
 * Linux: time a process spent runnable but waiting for a CPU (/proc/<pid>/schedstat, 2nd field, summed
 * over threads). On a shared box this tells "the client was slow" from "the client was not scheduled".
 */
import { readdirSync, readFileSync } from 'node:fs';

export function runqueueWaitMs(pid: number = process.pid): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const f = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/);
      ns += Number(f[1] ?? 0);
    }
    return ns / 1e6;
  } catch {
    return Number.NaN;
  }
}
