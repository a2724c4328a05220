import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InferbenchError } from '../../src/core/errors.js';
import { detectEngine } from '../../src/dialects/detect.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { noneFinished } from '../../src/report/layouts.js';
import { resolveRun } from '../../src/store/run-store.js';
import { runOptionProblem } from '../helpers/run-option-problem.js';
import { cliEntry, repoRoot, runCli } from '../helpers/cli.js';
import { startFixedDelayServer } from '../helpers/openai-server.js';
import { rawTcpServer } from '../helpers/raw-tcp-server.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-messages-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const problemOf = runOptionProblem;

/** A TCP server that accepts connections and never answers (a hung server, or a port behind a black hole). */
const silentServer = (): ReturnType<typeof rawTcpServer> => rawTcpServer();

describe('messages (issue 17, item 8)', () => {
  it('a malformed --rate, --concurrency or --input-lens is one problem, not also "needs --rate"', () => {
    expect(problemOf({ profile: 'constant', rate: 'abc' })).toBe('--rate "abc" is not a number > 0');
    expect(problemOf({ profile: 'concurrent', concurrency: '0' })).toBe('--concurrency "0" is not a whole number > 0');
    expect(problemOf({ profile: 'grid', inputLens: 'x', outputLens: '128' })).toBe('--input-lens "x" is not a whole number > 0');
    expect(problemOf({ profile: 'constant' })).toMatch(/^--profile constant needs --rate/);
  });

  it('https:// to a plain-HTTP server says so and gives the http:// URL', async () => {
    const server = await startFixedDelayServer({ ttftMs: 1, itlMs: 1 });
    try {
      const https = server.url.replace(/^http:/, 'https:');
      const err = (await detectEngine(https).catch((e: unknown) => e)) as InferbenchError;
      expect(err).toBeInstanceOf(InferbenchError);
      expect(err.code).toBe('E_CONNECT');
      expect(err.message).toBe(`${https} does not speak TLS: the server there answers plain HTTP`);
      expect(err.hint).toBe(`use --target ${server.url}`);
    } finally {
      await server.close();
    }
  });

  it('a run folder without summary.json says that (and, for an interrupted run, how to continue it)', () => {
    const started = join(tmp, 'started');
    mkdirSync(started);
    writeFileSync(join(started, 'manifest.json'), '{"command":"run"}');
    expect(() => resolveRun(started, tmp)).toThrow(`${started} has no summary.json: that run stopped before its first row finished`);
    const other = join(tmp, 'other');
    mkdirSync(other);
    expect(() => resolveRun(other, tmp)).toThrow(`${other} has no summary.json: it is not an inferbench run folder`);
  });

  it('after Ctrl-C, a row with nothing finished points to --resume, not to --drain', () => {
    const cut = { requests: { total: 4, ok: 0, errors: 0, incomplete: 4 }, firstError: 'E_ABORTED: run stopped' } as unknown as StageSummary;
    expect(noneFinished({ ...cut, interrupted: true })).toBe('none finished before the interruption: 4 cut (continue the run with --resume)');
    expect(noneFinished({ ...cut, interrupted: false })).toMatch(/raise --max-seconds or --drain/);
  });

  it('Ctrl-C before any request finished: the run prints how to resume, and nothing about --drain', async () => {
    const server = await startFixedDelayServer({ ttftMs: 10_000, itlMs: 5 });
    const out = join(tmp, 'interrupted');
    try {
      const args = ['run', '--target', server.url, '--profile', 'constant', '--rate', '5', '--max-seconds', '1m', '--out', out, '--no-progress'];
      const child = spawn(process.execPath, [...cliEntry, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.resume();
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (existsSync(join(out, 'requests.jsonl')) || /running constant profile/.test(stdout)) {
            clearInterval(poll);
            resolve();
          }
        }, 50);
      });
      await new Promise((r) => setTimeout(r, 500));
      child.kill('SIGINT');
      expect(await new Promise<number | null>((r) => child.on('close', r))).toBe(130);
      expect(stdout).not.toContain('--drain');
      expect(stdout).toContain(`interrupted: \`inferbench run --resume ${out}\``);
      expect(readFileSync(join(out, 'summary.json'), 'utf8')).toContain('"interrupted": true');
    } finally {
      await server.close();
    }
  });

  it('nothing answering at --target exits 2 whether the port refuses or stays silent', async () => {
    const silent = await silentServer();
    const free = await silentServer();
    await free.close(); // now a port nothing listens on
    try {
      const [quiet, refused] = await Promise.all([runCli(['run', '--target', silent.url]), runCli(['run', '--target', free.url])]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toMatch(/cannot connect to/);
      expect(quiet.code, quiet.stderr).toBe(2);
      expect(quiet.stderr).toMatch(/^error: no answer from http:\/\/127\.0\.0\.1:\d+ within 3000 ms: is the server up and reachable\? \(check host, port and scheme\)\n$/);
    } finally {
      await silent.close();
    }
  });
});
