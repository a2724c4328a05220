import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

/**
 * Set-up for every test file (vitest.config.ts `setupFiles`), active only under `npm run test:times`
 * (scripts/test-times.ts sets INFERBENCH_TEST_TIMES to a file): appends one JSON line per test file with its wall
 * time and the CPU its worker process spent on it, its own and that of the child processes it started and reaped
 * (servers, CLIs). The CPU comes from /proc/self/stat, so it is exact per file only when each worker is a process
 * (`--pool forks`, which the script passes); elsewhere (no /proc) the CPU fields are null.
 */
const out = process.env['INFERBENCH_TEST_TIMES'];

/** utime, stime, cutime, cstime of this process in ms, or null without /proc. */
function processCpuMs(): { self: number; children: number } | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) start at ") "; utime is field 14 of the line.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = (i: number): number => Number(fields[i - 3]);
    const msPerTick = 1000 / 100; // Linux reports these in USER_HZ, 100 on every Linux ABI Node runs on.
    return { self: (ticks(14) + ticks(15)) * msPerTick, children: (ticks(16) + ticks(17)) * msPerTick };
  } catch {
    return null;
  }
}

if (out) {
  let startWall = 0;
  let startCpu: ReturnType<typeof processCpuMs> = null;
  beforeAll(() => {
    startWall = performance.now();
    startCpu = processCpuMs();
  });
  // vitest wants the first argument destructured; the file is in the second.
  afterAll(({}, suite) => {
    const end = processCpuMs();
    const file = 'filepath' in suite ? suite.filepath : suite.file.filepath;
    appendFileSync(
      out,
      JSON.stringify({
        file,
        wallMs: Math.round(performance.now() - startWall),
        cpuSelfMs: end && startCpu ? end.self - startCpu.self : null,
        cpuChildrenMs: end && startCpu ? end.children - startCpu.children : null,
      }) + '\n',
    );
  });
}
