import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LaunchError, fillPlaceholders, freePort, launchServer, type ServerLaunchSpec } from '../../src/launch/index.js';
import { repoRoot } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'inferbench-launch-'));
const cli = `"${process.execPath}" "${join(repoRoot, 'bin/inferbench.js')}"`;
const tiny = `"${process.execPath}" "${join(repoRoot, 'test/helpers/tiny-server.mjs')}"`;
const pids: number[] = [];

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** kill(-pid, 0) throws once every process of the group is gone and reaped (PID 1 reaps orphans a moment later). */
async function groupGone(pid: number, group = true): Promise<boolean> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      process.kill(group ? -pid : pid, 0);
    } catch {
      return true;
    }
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function spec(name: string, command: (port: number) => string, extra: Partial<ServerLaunchSpec> = {}): Promise<ServerLaunchSpec> {
  const port = await freePort();
  return { name, command: command(port), port, logPath: join(dir, `${name}.log`), readyTimeoutMs: 30_000, stopTimeoutMs: 5000, ...extra };
}

async function launchError(s: ServerLaunchSpec): Promise<LaunchError> {
  const err = await launchServer(s).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LaunchError);
  return err as LaunchError;
}

describe('launchServer', () => {
  it('starts inferbench sim, waits until it answers a one-token request, and stops the whole group', async () => {
    const s = await spec('sim-vllm', (port) => `${cli} sim --engine tgi --port ${port}`);
    const server = await launchServer(s);
    pids.push(server.pid as number);
    expect(server.url).toBe(`http://127.0.0.1:${s.port}`);
    expect(server.startupSeconds).toBeGreaterThan(0);
    expect(server.firstRequestMs).toBeGreaterThan(0);
    expect(server.ready.engine).toBe('tgi');
    expect(server.ready.api).toBe('tgi');
    const stopped = await server.stop();
    expect(stopped.portFree).toBe(true);
    expect(await groupGone(server.pid as number)).toBe(true);
    // Idempotent: the same answer, nothing signalled twice.
    expect(await server.stop()).toEqual(stopped);
  });

  it('a command that exits before ready is failed-to-start with the log tail', async () => {
    const err = await launchError(await spec('broken', () => `echo "fatal: no such model" >&2; exit 3`));
    expect(err.status).toBe('failed-to-start');
    expect(err.message).toContain('exited with code 3');
    expect(err.logTail).toContain('fatal: no such model');
  });

  it('a server that never becomes ready is not-ready after the timeout, and its group is killed (SIGKILL when it ignores SIGTERM)', async () => {
    const s = await spec('stubborn', (port) => `trap '' TERM; echo $$ > ${join(dir, 'stubborn.pid')}; ${tiny} ${port} never-ready`, {
      readyTimeoutMs: 1500,
      stopTimeoutMs: 500,
    });
    const err = await launchError(s);
    expect(err.status).toBe('not-ready');
    expect(err.message).toContain('not ready within 1.5 s');
    expect(err.message).toContain('503');
    const pid = Number(readFileSync(join(dir, 'stubborn.pid'), 'utf8'));
    expect(await groupGone(pid)).toBe(true);
  });

  it('a port already in use is refused before anything starts', async () => {
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as { port: number }).port;
    const err = await launchError({ ...(await spec('collide', () => `${tiny} ${port}`)), port });
    holder.close();
    expect(err.status).toBe('failed-to-start');
    expect(err.message).toContain(`port ${port} is in use before the server started`);
  });

  it('a start command that returns at once is stopped with its stop command', async () => {
    const pidFile = join(dir, 'detached.pid');
    const s = await spec('detached', (port) => `setsid ${tiny} ${port} pidfile=${pidFile} > /dev/null 2>&1 & exit 0`, {
      stopCommand: `kill $(cat ${pidFile})`,
    });
    const server = await launchServer(s);
    expect(server.ready.api).toBe('openai-chat');
    expect(server.ready.model).toBe('tiny');
    const serverPid = Number(readFileSync(pidFile, 'utf8'));
    expect((await server.stop()).portFree).toBe(true);
    expect(await groupGone(serverPid, false)).toBe(true);
  });

  it('kills the group when node exits without stopping it', async () => {
    const script = `
      import { launchServer, freePort } from ${JSON.stringify(join(repoRoot, 'dist/launch/index.js'))};
      const port = await freePort();
      const s = await launchServer({ name: 'x', command: ${JSON.stringify(tiny)} + ' ' + port, port, logPath: ${JSON.stringify(join(dir, 'exit.log'))}, readyTimeoutMs: 20000, stopTimeoutMs: 1000 });
      console.log(s.pid);
      process.exit(0);`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(out.status).toBe(0);
    const pid = Number(out.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    expect(await groupGone(pid)).toBe(true);
  });
});

describe('fillPlaceholders', () => {
  it('fills {port}, {name} and any key; leaves the shell\'s ${VAR} alone', () => {
    expect(fillPlaceholders('serve --port {port} --tp {tp} --served-model-name {name} ${HOME}', { port: 8001, tp: 2, name: 'vllm-tp2' })).toBe(
      'serve --port 8001 --tp 2 --served-model-name vllm-tp2 ${HOME}',
    );
  });
  it('an unknown placeholder is a clear error naming the known ones', () => {
    expect(() => fillPlaceholders('serve --port {prot}', { port: 1, name: 'a' })).toThrow(/unknown placeholder \{prot\}/);
    try {
      fillPlaceholders('serve --port {prot}', { port: 1, name: 'a' });
    } catch (e) {
      expect((e as { hint: string }).hint).toContain('{port}, {name}');
    }
  });
});

afterAll(async () => {
  for (const pid of pids) expect(await groupGone(pid)).toBe(true);
});
