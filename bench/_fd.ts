/** Open-file limits: raise the soft limit to what a bench needs (up to the hard limit), or say clearly why not. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export function fdLimits(pid: number): { soft: number; hard: number } {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
  const [soft, hard] = (line ?? '').replace('Max open files', '').trim().split(/\s+/);
  const num = (s: string | undefined): number => (s === 'unlimited' ? Infinity : Number(s));
  return { soft: num(soft), hard: num(hard) };
}

/** Returns the soft limit now in force; throws with a remedy when `need` is above what may be set. */
export function ensureFdLimit(pid: number, need: number, who: string): number {
  const { soft, hard } = fdLimits(pid);
  if (soft >= need) return soft;
  if (hard < need) {
    throw new Error(`${who} needs ${need} open files but its hard limit is ${hard}: raise it (e.g. \`ulimit -Hn ${need}\` as root, or LimitNOFILE= in the service) and run again`);
  }
  try {
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${need}:${hard === Infinity ? 'unlimited' : hard}`]);
  } catch (err) {
    throw new Error(`${who} needs ${need} open files (soft limit ${soft}, hard ${hard}) and prlimit failed: ${(err as Error).message}; run \`ulimit -n ${need}\` first`);
  }
  return fdLimits(pid).soft;
}
