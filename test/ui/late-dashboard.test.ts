import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runIdOf } from '../../src/store/run-store.js';
import type { RunRow } from '../../src/ui/client/api-types.js';
import { spawnCli, type LongCli } from './spawn-cli.js';

// A run started before `inferbench ui` is shown live once the dashboard serves its folder (docs/dashboard.md:
// "whether it was started with --ui or not"). Every wait is for a state the run holds until the test moves on:
// its second row (20 requests at 0.01 req/s) stays in progress until the test stops it with Ctrl-C.
const WAIT_MS = 90_000;
const root = mkdtempSync(join(tmpdir(), 'ib-ui-late-'));
const results = join(root, 'results');
mkdirSync(results);
const started: LongCli[] = [];
afterAll(async () => {
  for (const p of started) await p.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Polls the dashboard's runs list until the run shows with that live status and at least that many rows. */
async function waitForRow(url: string, name: string, live: string, rows: number): Promise<RunRow> {
  const deadline = Date.now() + WAIT_MS;
  let last: RunRow | undefined;
  while (Date.now() < deadline) {
    const body = (await (await fetch(new URL('api/runs', url))).json()) as { runs: RunRow[] };
    last = body.runs.find((r) => r.name === name);
    if (last?.live === live && last.rows >= rows) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} never showed as ${live} with ${rows} rows within ${WAIT_MS} ms; last: ${JSON.stringify(last)}`);
}

describe('a run started before the dashboard', () => {
  it('shows as running once `inferbench ui` serves its folder, then as interrupted after Ctrl-C', async () => {
    const name = '20991231-000000-early';
    const run = spawnCli([
      'run', '--out', join(results, name), '--profile', 'constant', '--rate', '40,0.01', '--max-requests', '20',
      '--prompt-tokens', '32', '--output-tokens', '8', '--tokenizer', 'approx', '--idle-wait', '0', '--no-progress',
    ]);
    started.push(run);
    await run.waitFor(/running constant profile/, WAIT_MS);
    // No dashboard served the folder when the run started: it says nothing about one.
    expect(run.stdout()).not.toContain('live:');

    const ui = spawnCli(['ui', '--results', results, '--port', '0']);
    started.push(ui);
    const url = (await ui.waitFor(/inferbench dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/, WAIT_MS))[1] as string;
    // Running, its first row done (the second holds until the Ctrl-C below).
    const row = await waitForRow(url, name, 'running', 1);
    expect(row.id).toBe(runIdOf(name));
    expect(row.rows).toBe(1);

    // Ctrl-C; the run's own exit, however long a busy machine takes to write its files.
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(130);
    await waitForRow(url, name, 'interrupted', 1);
  }, 240_000);
});
