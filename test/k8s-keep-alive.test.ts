/**
 * The emptyDir form's container, run for real with /bin/sh and a stand-in `inferbench` on PATH: the run gets the
 * user's flags exactly as typed once Kubernetes has expanded `$(VAR)` and `$$`, its exit status is recorded and
 * returned, and SIGTERM (the Job deleted) reaches the run instead of waiting out --keep-seconds.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildShardManifests, keepAliveScript, type ShardJobSpec } from '../src/k8s/manifest.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-k8s-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** What the kubelet does to command and args: `$$` → `$`, `$(VAR)` → VAR's value where the container defines it. */
function expandLikeKubernetes(text: string, env: Record<string, string>): string {
  return text.replace(/\$(\$|\(([A-Za-z_][A-Za-z0-9_]*)\))/g, (whole, what: string, name: string | undefined) => {
    if (what === '$') return '$';
    return name !== undefined && env[name] !== undefined ? env[name] : whole;
  });
}

function spec(keepSeconds: number): ShardJobSpec {
  return { name: 'keep', pods: 3, image: 'img', plan: '{"planVersion":1}', startAt: '2026-11-24T09:30:00Z', cpu: '1', memory: '1Gi', keepSeconds };
}

/** Starts the container's argv in a shell, the results mount moved under a temporary folder. */
function startContainer(s: ShardJobSpec, fake: string, dir: string): { child: ReturnType<typeof spawn>; done: Promise<number | null> } {
  const c = buildShardManifests(s).load.spec?.template.spec?.containers[0];
  if (!c?.command || !c.args) throw new Error('no container argv');
  const env = { JOB_COMPLETION_INDEX: '1' };
  const relocate = (t: string): string => expandLikeKubernetes(t, env).replaceAll('/results/', `${dir}/results/`);
  const [cmd, ...rest] = [...c.command, ...c.args].map(relocate);
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'inferbench'), fake);
  chmodSync(join(bin, 'inferbench'), 0o755);
  const child = spawn(cmd as string, rest, { env: { PATH: `${bin}:${process.env['PATH'] ?? ''}`, FAKE_DIR: dir, ...env }, stdio: 'ignore' });
  return { child, done: new Promise((resolve) => child.on('close', (code) => resolve(code))) };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('k8s emptyDir container: the keep-alive shell around the run', () => {
  it('has nothing Kubernetes would expand in its script', () => {
    const script = keepAliveScript(spec(600));
    expect(script).not.toContain('$(');
    expect(script).not.toContain('$$');
  });

  it('hands the run the plan, its shard index and folder, records its exit status and returns it after the keep time', async () => {
    const dir = join(tmp, 'verbatim');
    const fake = '#!/bin/sh\nfor a in "$@"; do printf \'%s\\n\' "$a"; done > "$FAKE_DIR/args"\nexit 3\n';
    const { done } = startContainer(spec(1), fake, dir);
    expect(await done).toBe(3);
    // The run flags (and --start-at) are in the plan the ConfigMap mounts: the argv only says which shard this pod is.
    expect(readFileSync(join(dir, 'args'), 'utf8').trimEnd().split('\n')).toEqual([
      'run',
      '--plan',
      '/etc/inferbench/plan.json',
      '--shard',
      '1/3',
      '--out',
      `${dir}/results/keep/shard-1`,
    ]);
    expect(readFileSync(join(dir, 'results/keep/shard-1.exit'), 'utf8').trim()).toBe('3');
  });

  it('SIGTERM (the Job deleted) stops the run, records its status and skips the keep time', async () => {
    const dir = join(tmp, 'term');
    const fake = [
      '#!/bin/sh',
      "trap 'echo term > \"$FAKE_DIR/term\"; exit 130' TERM",
      // Long enough for the shell to have set its own trap by the time the test sends SIGTERM.
      'sleep 0.3; touch "$FAKE_DIR/started"',
      'while :; do sleep 0.05; done',
      '',
    ].join('\n');
    // A keep time far beyond the test's timeout: the container must not wait it out.
    const { child, done } = startContainer(spec(3600), fake, dir);
    await until(() => existsSync(join(dir, 'started')), 'the run to start');
    child.kill('SIGTERM');
    expect(await done).toBe(130);
    expect(existsSync(join(dir, 'term'))).toBe(true);
    expect(readFileSync(join(dir, 'results/keep/shard-1.exit'), 'utf8').trim()).toBe('130');
  });
});
