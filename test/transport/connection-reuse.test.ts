import { readFileSync, rmSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { getDialect } from '../../src/dialects/index.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { createHttpStageRunner } from '../../src/load/http-runner.js';
import type { ClientHealth } from '../../src/metrics/health.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { HttpTarget } from '../../src/transport/http.js';
import { createFixedLengthWorkload } from '../../src/workload/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { startClosingServer, type ClosingServer, type ClosingServerOptions } from '../helpers/closing-server.js';

interface Outcome {
  records: RequestRecord[];
  row: StageSummary;
  server: ClosingServer;
  reusesConnections: boolean;
}

/** Both HTTP clients follow the same rule (ReuseRule); `client` picks the one under test. */
let client: 'h1' | 'undici' = 'h1';

/** `requests` measured requests at `concurrency` (1 = one at a time) through HttpTarget, as `run` sends them. */
async function bench(server: ClosingServerOptions, requests: number, concurrency = 1): Promise<Outcome> {
  const srv = await startClosingServer(server);
  const target = new HttpTarget({ baseUrl: srv.url, connections: concurrency, client });
  const records: RequestRecord[] = [];
  try {
    const runner = createHttpStageRunner({
      target, dialect: getDialect('openai-completions'), model: 'm', forceLength: true, stream: true, seed: 1, onRecord: (r) => records.push(r),
    });
    const result = await runBenchmark(
      { profile: 'concurrent', concurrencies: [concurrency], limits: { maxRequests: requests }, workload: createFixedLengthWorkload(8, 6) },
      runner,
    );
    return { records, row: result.stages[0] as StageSummary, server: srv, reusesConnections: target.reusesConnections };
  } finally {
    await target.close();
    await srv.close();
  }
}

const errorCodes = (records: RequestRecord[]): string[] => records.filter((r) => r.status !== 'ok').map((r) => r.error?.code ?? '?');
const retried = (records: RequestRecord[]): RequestRecord[] => records.filter((r) => (r.retries ?? 0) > 0);

// closeDelayMs 200: the server closes 200 ms after each reply, so a client that sends its next request at
// once always writes it on the dying connection (the race llama-server loses some of the time, made certain).
for (const which of ['h1', 'undici'] as const) {
  describe(`${which} client`, () => {
    beforeEach(() => {
      client = which;
    });

    describe('a server that closes the connection after each reply (llama-server)', () => {
      it('one at a time: all 30 measured and ok, the lost first reuse retried once and counted apart', async () => {
        const { records, row, server, reusesConnections } = await bench({ closeDelayMs: 200 }, 30);
        expect(row.requests).toMatchObject({ total: 30, ok: 30, errors: 0, retried: 1 });
        expect(row.errorsByCode).toEqual({});
        expect(errorCodes(records)).toEqual([]);
        expect(retried(records).map((r) => r.retries)).toEqual([1]);
        // Every request reached the server exactly once: the retried one had never been read.
        expect(server.received).toBe(records.length);
        expect(server.unread).toBe(1);
        // After the retry every request asks for its own connection.
        expect(reusesConnections).toBe(false);
        expect(server.connectionHeaders.at(-1)).toBe('close');
      });

      it('with a close right after the reply (the real race): still no failure', async () => {
        const { records, row, server } = await bench({ closeDelayMs: 0 }, 30);
        expect(row.requests).toMatchObject({ total: 30, ok: 30, errors: 0 });
        expect(server.received).toBe(records.length);
      });

      it('four at a time: all 30 ok, at most one retry per stream', async () => {
        const { records, row, server } = await bench({ closeDelayMs: 200 }, 30, 4);
        expect(row.requests).toMatchObject({ total: 30, ok: 30, errors: 0 });
        expect(row.requests.retried).toBeGreaterThanOrEqual(1);
        expect(row.requests.retried).toBeLessThanOrEqual(4);
        // Every request reached the server at most once, and every one that was not cut reached it exactly once. With
        // four streams the row's cool-down requests are records too; the ones still in flight when the last measured
        // request finished were cancelled, and one cancelled before its reply's head came back (still connecting, or
        // written on a dying connection and not yet sent again) may never have been read.
        const cut = records.filter((r) => r.cooldown === true && r.status === 'incomplete');
        expect(records.filter((r) => r.status !== 'ok')).toEqual(cut);
        expect(server.received).toBeGreaterThanOrEqual(records.length - cut.filter((r) => r.headersAtMs === undefined).length);
        expect(server.received).toBeLessThanOrEqual(records.length);
      });

      it('a request the server read and then dropped is a failure, not retried', async () => {
        // Read #6 comes after the switch to one connection per request: a fresh connection, so the server's doing.
        const { records, row, server } = await bench({ closeDelayMs: 200, dropAfterReading: (i) => i === 6 }, 30);
        expect(row.requests).toMatchObject({ total: 30, ok: 29, errors: 1 });
        expect(row.errorsByCode).toEqual({ E_RESET: 1 });
        const failed = records.find((r) => r.status === 'error');
        expect(failed?.retries).toBeUndefined();
        expect(server.received).toBe(records.length);
      });
    });

    describe('a server that keeps its connections', () => {
      it('dropping a request after reading it on a reused connection is E_RESET, never retried into success', async () => {
        // Reads #0 and #1 prove the server answers on a reused connection; #4 is then dropped unanswered.
        const { records, row, server, reusesConnections } = await bench({ closeAfterResponse: false, dropAfterReading: (i) => i === 4 }, 12);
        expect(row.requests).toMatchObject({ total: 12, ok: 11, errors: 1 });
        expect(row.requests.retried).toBeUndefined();
        expect(row.errorsByCode).toEqual({ E_RESET: 1 });
        expect(retried(records)).toEqual([]);
        expect(server.received).toBe(records.length);
        expect(reusesConnections).toBe(true);
        // Kept-alive connections were reused: far fewer connections than requests.
        expect(server.connections).toBeLessThan(records.length);
      });

      it('a drop on a fresh connection is E_RESET too', async () => {
        const { records, server } = await bench({ closeAfterResponse: false, dropAfterReading: (i) => i === 0 }, 4);
        expect(errorCodes(records)).toEqual(['E_RESET']);
        expect(retried(records)).toEqual([]);
        expect(server.received).toBe(records.length);
      });
    });
  });
}

describe('inferbench run against a closing server', () => {
  it('--max-requests 30 measures 30 with no failure; --json carries complete', async () => {
    const server = await startClosingServer({ closeDelayMs: 200 });
    try {
      const out = `/tmp/inferbench-closing-${process.pid}`;
      const res = await runCli(['run', '--target', server.url, '--api', 'openai-completions', '--model', 'm', '--profile', 'synchronous',
        '--max-requests', '30', '--prompt-tokens', '16', '--output-tokens', '6', '--json', '--out', out, '--no-progress']);
      expect(res.code, res.stderr).toBe(0);
      const doc = JSON.parse(res.stdout) as { complete?: boolean; stages: StageSummary[]; health?: ClientHealth };
      expect(doc.complete).toBe(true);
      // --json prints the very document summary.json holds (design.md §1).
      expect(doc).toEqual(JSON.parse(readFileSync(`${out}/summary.json`, 'utf8')));
      expect(doc.stages[0]?.requests).toMatchObject({ total: 30, ok: 30, errors: 0, retried: 1 });
      // Each request opened its own connection: that time is reported apart, not as the client's lag.
      expect(doc.stages[0]?.metrics.connectWaitMs?.count).toBe(30);
      expect(typeof doc.health?.connectWaitP99Ms).toBe('number');
    } finally {
      await server.close();
      rmSync(`/tmp/inferbench-closing-${process.pid}`, { recursive: true, force: true });
    }
  }, 60_000);
});
