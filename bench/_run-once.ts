/**
 * One `inferbench run` of N requests against the paced server (bench/_paced-server.ts), for profiling the CLI
 * as users run it. WRAP prefixes the node command (e.g. `perf record -F 4000 -e cpu-clock -o perf.data`), NODEFLAGS
 * adds node flags (e.g. `--perf-basic-prof`, `--cpu-prof`), CLI another build's bin/inferbench.js, OUT=1 shows
 * the CLI's stdout. Two runs (N and 3N) profiled alike and subtracted give per-token costs without start-up
 * (bench/README.md, "Profile").
 *
 *   [WRAP=...] [NODEFLAGS=...] npx tsx bench/_run-once.ts [N=1920] [outputTokens=64]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPacedServer } from './_overhead-paced.js';
const n = Number(process.argv[2] ?? 1920);
const out = Number(process.argv[3] ?? 64);
const wrap = (process.env.WRAP ?? '').split(' ').filter(Boolean);
const cli = process.env.CLI ?? join(process.cwd(), 'bin/inferbench.js');
const server = await startPacedServer(['--ttft-ms', '20', '--itl-ms', '10']);
const dir = mkdtempSync(join(tmpdir(), 'prof-run-'));
const args = [...wrap, process.execPath, ...(process.env.NODEFLAGS ?? '').split(' ').filter(Boolean), cli, 'run', '--target', server.url, '--api', 'openai-completions', '--profile', 'concurrent', '--concurrency', '128', '--max-requests', String(n), '--prompt-tokens', '16', '--output-tokens', String(out), '--out', join(dir, 'run')];
const child = spawn(args[0]!, args.slice(1), { stdio: ['ignore', process.env.OUT ? 'inherit' : 'ignore', 'inherit'] });
const code = await new Promise((r) => child.once('exit', r));
const u = await server.usage();
console.log(JSON.stringify({ exit: code, serverTokens: u.tokens }));
rmSync(dir, { recursive: true, force: true });
await server.close();
