import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stallLimitMs } from '../../src/load/benchmark.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { runCli } from '../helpers/cli.js';
import { readRunFolder } from '../helpers/run-folder.js';

/**
 * Issue 36, item 3: a server that accepts requests and never answers. `run` used to keep sending for minutes (the
 * first-byte timeout is 10 minutes); now a row stops once requests are open and none has finished for
 * --stall-timeout, and the run stops when not one request of the row had finished.
 */
async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string; open: () => number }> {
  let open = 0;
  const server = createServer((req, res) => {
    // GET probes (models, metrics, detection) get a quick 404: only the generation requests hang, so the test
    // does not wait out the start-up probes' own timeouts.
    if (req.method === 'GET') {
      res.writeHead(404);
      return res.end();
    }
    open++;
    res.on('close', () => open--);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, open: () => open };
}

/** A minimal streamed chat reply of two tokens. */
function reply(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (content: string, finish: string | null): string =>
    `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
  res.write(chunk('a', null));
  res.write(chunk('b', 'length'));
  res.end(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [], usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 } })}\n\ndata: [DONE]\n\n`);
}

describe('a server that accepts requests and never answers', () => {
  let tmp: string;
  const servers: Server[] = [];
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-stall-'));
  });
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  it('stops the row after --stall-timeout with one line, cancels what is open, and ends the run with exit 1', async () => {
    const silent = await listen(() => undefined);
    servers.push(silent.server);
    const out = join(tmp, 'silent');
    const res = await runCli([
      'run', '--target', silent.url, '--api', 'openai-chat', '--model', 'm', '--tokenizer', 'approx', '--profile', 'constant', '--rate', '2,4',
      '--max-seconds', '3', '--stall-timeout', '1', '--out', out, '--no-progress',
    ]);
    expect(res.code, res.stderr).toBe(1);
    const line = /no reply from the server in 1 s \((\d+) requests open\): stopped/.exec(res.stderr);
    expect(line, res.stderr).not.toBeNull();
    expect(res.stderr).toMatch(/^error: asynchronous@2\.00 req\/sec: no reply from the server in 1 s \(\d+ requests open\): stopped; not one request completed, so the run stops here \(requests that take longer need a longer --stall-timeout\)$/m);
    const open = Number(line?.[1]);
    // Sent at 0 and 0.5 s at least before a second without an answer.
    expect(open).toBeGreaterThanOrEqual(2);
    const { doc, records } = readRunFolder(out);
    // The row is kept, the next rate never ran; every request it sent was open when it stopped, and was cancelled.
    expect(doc.stages).toHaveLength(1);
    expect(doc.stages[0]?.stoppedEarly).toBe(line?.[0]);
    expect(records).toHaveLength(open);
    for (const r of records) {
      expect(r.status).toBe('incomplete');
      expect(r.error?.message).toBe(line?.[0]);
    }
    // The requests were closed on the server's side too.
    for (let i = 0; i < 50 && silent.open() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(silent.open()).toBe(0);
  }, 60_000);

  it('a server that goes silent after a finished row: that row is kept, the run stops at the silent one', async () => {
    // Answers one request at a time (after 300 ms: long enough that concurrent@2's two streams are both open even
    // when a loaded machine opens the second connection late); a second request open at once silences it for good.
    let silenced = false;
    let busy = 0;
    const flaky = await listen((_req, res) => {
      busy++;
      res.on('close', () => busy--);
      if (busy > 1) silenced = true;
      setTimeout(() => {
        if (!silenced) reply(res);
      }, 300);
    });
    servers.push(flaky.server);
    const out = join(tmp, 'flaky');
    const res = await runCli([
      'run', '--target', flaky.url, '--api', 'openai-chat', '--model', 'm', '--tokenizer', 'approx', '--profile', 'concurrent', '--concurrency', '1,2,4',
      '--output-tokens', '2', '--max-seconds', '1', '--stall-timeout', '1', '--idle-wait', '1', '--out', out, '--no-progress',
    ]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(/^error: concurrent@2: no reply from the server in 1 s \(2 requests open\): stopped; not one request completed, so the run stops here \(requests that take longer need a longer --stall-timeout\)$/m);
    const { doc, records } = readRunFolder(out);
    expect(doc.stages.map((s) => s.label)).toEqual(['concurrent@1', 'concurrent@2']);
    expect(doc.stages[0]?.requests.ok).toBeGreaterThan(0);
    expect(doc.stages[0]?.stoppedEarly).toBeUndefined();
    expect((doc.stages[1] as StageSummary & { serverSilent?: boolean }).serverSilent).toBe(true);
    expect(records.filter((r) => r.stage === 1 && r.status === 'incomplete')).toHaveLength(2);
  }, 60_000);

  it("the stall limit is --stall-timeout, or 10× the synchronous row's median latency once that is longer", () => {
    const sync = (median: number): StageSummary => ({ label: 'synchronous', metrics: { e2eMs: { median } } }) as unknown as StageSummary;
    expect(stallLimitMs(30_000, [])).toBe(30_000);
    expect(stallLimitMs(30_000, [sync(1200)])).toBe(30_000);
    expect(stallLimitMs(30_000, [sync(4000)])).toBe(40_000);
  });
});
