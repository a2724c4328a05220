/**
 * Preloaded into the `inferbench run` child of bench/_overhead-run.ts (`node --import`): at exit it writes
 * this process's CPU (getrusage of all its threads, µs) and the CPU of any children it waited for (from
 * /proc/self/stat, clock ticks) to the file named by INFERBENCH_EXIT_USAGE, so the bench reads the whole client
 * process tree's CPU to the microsecond without a wrapper such as /usr/bin/time (centiseconds).
 */
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.INFERBENCH_EXIT_USAGE;
if (file) {
  process.on('exit', () => {
    const r = process.resourceUsage();
    let childUserUs = 0;
    let childSystemUs = 0;
    try {
      // Fields after the command name: cutime and cstime are the 14th and 15th (1-based 16 and 17 overall).
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      childUserUs = Number(f[13]) * 10_000;
      childSystemUs = Number(f[14]) * 10_000;
    } catch {
      // not Linux: the process's own CPU only
    }
    writeFileSync(file, JSON.stringify({ userUs: r.userCPUTime, systemUs: r.systemCPUTime, childUserUs, childSystemUs, voluntarySwitches: r.voluntaryContextSwitches, involuntarySwitches: r.involuntaryContextSwitches }));
  });
}
