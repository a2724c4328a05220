// Runs the built CLI once against the paced server under a wrapper (perf record), for profiling.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
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
console.log('exit', code, 'server tokens', u.tokens, 'dir', dir);
await server.close();
