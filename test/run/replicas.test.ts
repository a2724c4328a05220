/**
 * Several replicas (issue 34 item 1): `run --target A,B --balance P` against two `inferbench sim` servers of
 * different speeds (real HTTP on 127.0.0.1). Assertions are on counts the policies decide, not on timings.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/metrics/record.js';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';
import { runCli } from '../helpers/cli.js';
import { readRunFolder } from '../helpers/run-folder.js';


const sim = (modelTimeScale: number): Promise<SimServer> =>
  startSimServer({ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1, seed: 3, modelTimeScale, port: 0 });

const count = (records: readonly RequestRecord[], replica: number): number => records.filter((r) => r.replica === replica).length;
const BASE = ['--prompt-tokens', '64', '--output-tokens', '16', '--tokenizer', 'approx', '--no-progress', '--idle-wait', '0'];

describe('run --target A,B: load spread over replicas', () => {
  let fast: SimServer;
  let slow: SimServer;
  let tmp: string;
  beforeAll(async () => {
    // The slow replica takes 12× the model time of the fast one.
    fast = await sim(0.1);
    slow = await sim(1.2);
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-replicas-'));
  });
  afterAll(async () => {
    await fast.close();
    await slow.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('round-robin splits the requests evenly (±1) and the per-replica figures match the records', async () => {
    const out = join(tmp, 'rr');
    const res = await runCli(['run', '--target', `${fast.url},${slow.url}`, '--profile', 'concurrent', '--concurrency', '4', '--max-requests', '30', ...BASE, '--out', out]);
    expect(res.code, res.stderr).toBe(0);
    const { doc, records } = readRunFolder(out);
    expect(records.every((r) => r.replica === 0 || r.replica === 1)).toBe(true);
    expect(Math.abs(count(records, 0) - count(records, 1))).toBeLessThanOrEqual(1);
    const row = doc.stages[0];
    expect(row?.replicas?.map((r) => r.url)).toEqual([fast.url, slow.url]);
    for (const r of row?.replicas ?? []) {
      const mine = records.filter((x) => x.replica === r.index && !x.warmup);
      expect(r.sent).toBe(mine.length);
      expect(r.ok).toBe(mine.filter((x) => x.status === 'ok').length);
      const ttfts = mine.filter((x) => x.status === 'ok').map((x) => x.ttftMs as number).sort((a, b) => a - b);
      expect(r.ttftMs?.p50).toBeCloseTo(ttfts.length % 2 ? (ttfts[ttfts.length >> 1] as number) : ((ttfts[(ttfts.length >> 1) - 1] as number) + (ttfts[ttfts.length >> 1] as number)) / 2, 6);
    }
    expect(res.stdout).toMatch(/replica 1 http:\/\/127\.0\.0\.1:\d+: \d+\/\d+ ok/);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { plan: { target: { replicas: string[]; balance: string } } };
    expect(manifest.plan.target.replicas).toEqual([fast.url, slow.url]);
    expect(manifest.plan.target.balance).toBe('round-robin');
  });

  it('least-inflight sends more requests to the faster replica', async () => {
    const out = join(tmp, 'lif');
    const res = await runCli(['run', '--target', fast.url, '--target', slow.url, '--balance', 'least-inflight', '--profile', 'concurrent', '--concurrency', '4', '--max-requests', '40', ...BASE, '--out', out]);
    expect(res.code, res.stderr).toBe(0);
    const { records } = readRunFolder(out);
    expect(count(records, 0)).toBeGreaterThan(count(records, 1));
  });

  it('session keeps every conversation on one replica', async () => {
    const out = join(tmp, 'session');
    const res = await runCli(['run', '--target', `${fast.url},${slow.url}`, '--balance', 'session', '--turns', '3', '--profile', 'concurrent', '--concurrency', '4', '--max-requests', '24', ...BASE, '--out', out]);
    expect(res.code, res.stderr).toBe(0);
    const { records } = readRunFolder(out);
    const byConversation = new Map<number, Set<number>>();
    for (const r of records) {
      expect(r.conversationId).toBeDefined();
      const set = byConversation.get(r.conversationId as number) ?? new Set<number>();
      set.add(r.replica as number);
      byConversation.set(r.conversationId as number, set);
    }
    expect(byConversation.size).toBeGreaterThan(2);
    for (const set of byConversation.values()) expect(set.size).toBe(1);
    // Both replicas got conversations.
    expect(new Set(records.map((r) => r.replica)).size).toBe(2);
  });

  it('a replica that dies mid-run is reported as down and the other carries the rest', async () => {
    const dying = await sim(0.1);
    const out = join(tmp, 'dies');
    const run = runCli(['run', '--target', `${fast.url},${dying.url}`, '--profile', 'concurrent', '--concurrency', '2', '--max-requests', '60', ...BASE, '--out', out]);
    // Close it once it has finished 6 requests (polled: whatever the machine's speed, it dies mid-run).
    await new Promise<void>((resolveDone) => {
      const timer = setInterval(() => {
        if (dying.truth.finished().length >= 6) {
          clearInterval(timer);
          void dying.close().then(() => resolveDone());
        }
      }, 5);
    });
    const res = await run;
    const { doc, records } = readRunFolder(out);
    const row = doc.stages[0];
    const down = row?.replicas?.[1]?.down;
    expect(down, res.stdout + res.stderr).toBeDefined();
    expect(down?.error).toMatch(/E_CONNECT/);
    expect(res.stdout).toMatch(/replica 1 \(http:\/\/127\.0\.0\.1:\d+\) went down/);
    // Once down, nothing more went to it: its failures are the requests in flight at its death and the one refused.
    const failedOnDead = records.filter((r) => r.replica === 1 && r.status !== 'ok').length;
    expect(failedOnDead).toBeLessThanOrEqual(4);
    expect(records.filter((r) => r.replica === 0 && r.status === 'ok').length).toBeGreaterThan(40);
  });

  it('--session-header: every turn of a conversation carries its id, the same on each turn', async () => {
    // A pass-through in front of the fast replica that notes the header of every generation request.
    const seen: string[] = [];
    const proxy = createServer((req, res) => {
      if (req.method === 'POST') seen.push(String(req.headers['x-conv']));
      const up = httpRequest(`${fast.url}${req.url}`, { method: req.method, headers: req.headers }, (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const out = join(tmp, 'header');
      const res = await runCli(['run', '--target', url, '--session-header', 'X-Conv', '--turns', '3', '--profile', 'synchronous', '--max-requests', '6', ...BASE, '--out', out]);
      expect(res.code, res.stderr).toBe(0);
      const { records } = readRunFolder(out);
      const turns = records.filter((r) => r.conversationId !== undefined);
      expect(turns.length).toBeGreaterThanOrEqual(6);
      const ids = seen.filter((h) => h !== 'undefined');
      expect(ids.length).toBe(turns.length);
      // One id per conversation: as many distinct values as conversations, each on all of its turns.
      const conversations = new Set(turns.map((r) => r.conversationId));
      expect(new Set(ids).size).toBe(conversations.size);
    } finally {
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it('refuses --balance with one target, and a bad URL in the list', async () => {
    const one = await runCli(['run', '--target', fast.url, '--balance', 'session', '--max-requests', '1']);
    expect(one.code).toBe(2);
    expect(one.stderr).toMatch(/--balance spreads requests over several replicas/);
    const bad = await runCli(['run', '--target', `${fast.url},nope`, '--max-requests', '1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--target "nope" is not an http\(s\) URL/);
  });
});
