/**
 * vitest globalSetup for the llama.cpp suite: builds (or finds cached) llama-server once per machine with
 * scripts/llamacpp/build-llama-server.sh, and hands the test files either the cache folder or the reason the
 * environment cannot build it (the only case in which the suite skips).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { repoRoot } from '../helpers/cli.js';

export type LlamaServerBuild = { dir: string; buildSeconds?: number } | { skipReason: string };

declare module 'vitest' {
  export interface ProvidedContext {
    llamaServerBuild: LlamaServerBuild;
  }
}

/** Longest a first build may take before it counts as failed (2 cores take ~10–15 minutes). */
const BUILD_LIMIT_MS = 60 * 60_000;
/** build-llama-server.sh's exit code for "this environment cannot build it". */
const EXIT_ENVIRONMENT = 3;

export function buildLlamaServer(): Promise<LlamaServerBuild> {
  const script = join(repoRoot, 'scripts/llamacpp/build-llama-server.sh');
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn('bash', [script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      process.stderr.write(d); // progress of a first build, so a 10-minute wait is not silent
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), BUILD_LIMIT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ skipReason: `cannot run bash to build llama-server: ${e.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const tookS = Math.round((Date.now() - started) / 1000);
      if (code === 0) {
        const dir = stdout.trim().split('\n').pop() ?? '';
        if (tookS > 30) process.stderr.write(`llama-server: built in ${tookS} s\n`);
        resolve({ dir, buildSeconds: tookS });
      } else if (code === EXIT_ENVIRONMENT) {
        const line = stderr.trim().split('\n').filter((l) => l.includes('environment:')).pop() ?? stderr.trim();
        resolve({ skipReason: line });
      } else {
        reject(new Error(`llama-server build failed (exit ${code ?? 'killed'} after ${tookS} s):\n${stderr.slice(-4000)}`));
      }
    });
  });
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('llamaServerBuild', await buildLlamaServer());
}
