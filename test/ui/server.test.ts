import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runIdOf } from '../../src/store/run-store.js';
import type { ApiError, CompareView, RequestsView, RunRow, RunView } from '../../src/ui/client/api-types.js';
import { MARKER_FILE, readMarker } from '../../src/ui/marker.js';
import { SCATTER_LIMIT } from '../../src/ui/run-views.js';
import { startDashboard, type Dashboard } from '../../src/ui/server.js';

let root: string;
let results: string;
let dash: Dashboard;
const SECRET = 'sk-live-do-not-show-123';

/** An HTTP exchange with the dashboard, with a chosen Host header and body. */
function call(path: string, opts: { method?: string; host?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const u = new URL(path, dash.url);
  return new Promise((resolve, reject) => {
    const req = request(u, { method: opts.method ?? 'GET', headers: { host: opts.host ?? u.host, ...opts.headers } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}
const getJson = async <T>(path: string): Promise<{ status: number; body: T }> => {
  const r = await call(path);
  return { status: r.status, body: JSON.parse(r.text) as T };
};

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-ui-api-'));
  results = join(root, 'results');
  const predict = async (args: string[], name: string): Promise<void> => {
    const r = await runCli(['predict', ...args, '--out', join(results, name)]);
    expect(r.code, r.stderr).toBe(0);
  };
  await Promise.all([
    predict(['--profile', 'constant', '--rate', '2,4', '--max-requests', '30', '--engine', 'vllm'], 'a-vllm'),
    predict(['--profile', 'constant', '--rate', '2,4', '--max-requests', '30', '--engine', 'sglang', '--model', 'Llama-3.1-8B-Instruct'], 'b-llama'),
  ]);
  // A run whose manifest holds secrets (as an older or hand-edited one could), and many requests.
  cpSync(join(results, 'a-vllm'), join(results, 'c-secret'), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(results, 'c-secret', 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest['argv'] = ['run', '--target', 'http://127.0.0.1:8000', '--api-key', SECRET];
  manifest['options'] = { ...(manifest['options'] as object), apiKey: SECRET, headers: { Authorization: `Bearer ${SECRET}` } };
  writeFileSync(join(results, 'c-secret', 'manifest.json'), JSON.stringify(manifest));
  const lines = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ id: i, stage: i % 2, warmup: false, status: 'ok', sentAtMs: 500 + i, ttftMs: 10 + (i % 97), itlMs: 5, e2eMs: 100 }));
  writeFileSync(join(results, 'c-secret', 'requests.jsonl'), `${lines.join('\n')}\n`);
  mkdirSync(join(results, 'not-a-run'));
  dash = await startDashboard({ resultsDir: results, port: 0 });
  // Generous: two predictions in child processes, on a 2-core machine that may be busy.
}, 180_000);

afterAll(async () => {
  await dash?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('dashboard API over the run store', () => {
  it('lists the runs `ls --json` lists, with the fields the filters use', async () => {
    const { body } = await getJson<{ runs: RunRow[] }>('/api/runs');
    const ls = await runCli(['ls', '--results', results, '--json']);
    const lsIds = (JSON.parse(ls.stdout) as { id: string }[]).map((r) => r.id).sort();
    expect(body.runs.map((r) => r.id).sort()).toEqual(lsIds);
    const llama = body.runs.find((r) => r.name === 'b-llama');
    expect(llama).toMatchObject({ id: runIdOf('b-llama'), layout: 'sweep', model: 'Llama-3.1-8B-Instruct', tool: 'inferbench', rows: 2, predicted: true });
  });

  it('serves a run: its seed table, its charts, its notes', async () => {
    const { status, body } = await getJson<RunView>(`/api/runs/${runIdOf('a-vllm')}`);
    expect(status).toBe(200);
    expect(body.table.headers[0]).toBe('Benchmark');
    expect(body.table.rows.map((r) => r[0])).toEqual(['asynchronous@2.00 req/sec', 'asynchronous@4.00 req/sec']);
    expect(body.charts.map((c) => c.name)).toContain('ttft-vs-req-rate');
    expect(body.command).toMatch(/^inferbench predict/);
  });

  it('never shows a secret from manifest.json, and shows the command line with it redacted', async () => {
    const r = await call(`/api/runs/${runIdOf('c-secret')}`);
    expect(r.status).toBe(200);
    expect(r.text).not.toContain(SECRET);
    expect((JSON.parse(r.text) as RunView).command).toBe(`inferbench run --target http://127.0.0.1:8000 --api-key '<redacted>'`);
  });

  it('caps per-request charts: a seeded sample of a large requests.jsonl', async () => {
    const { body } = await getJson<RequestsView>(`/api/runs/${runIdOf('c-secret')}/requests`);
    expect(body.total).toBe(5000);
    expect(body.sampled).toBe(true);
    const values = (body.scatter?.spec['data'] as { values: unknown[] }).values;
    expect(values).toHaveLength(SCATTER_LIMIT);
    // Histograms hold each row's own sample (2,500 requests per row here, 2,000 kept per row and metric).
    expect(body.histograms.map((h) => (h.spec['data'] as { values: unknown[] }).values.length)).toEqual([4000, 4000, 4000]);
    // Same file, same sample.
    const again = await getJson<RequestsView>(`/api/runs/${runIdOf('c-secret')}/requests`);
    expect(again.body.scatter?.spec).toEqual(body.scatter?.spec);
  });

  it("charts the server's gauges and the GPU power on the TTFT scatter's time axis: seconds from the first request", async () => {
    // c-secret's first request was sent at 500 ms on the run's clock; readings before it (start-up checks) are left out.
    const dir = join(results, 'c-secret');
    const telemetry = [{ atMs: 100, stage: 0, running: 9 }, { atMs: 2500, stage: 0, running: 3, waiting: 1, kvUsage: 0.2 }, { atMs: 3500, stage: 1, running: 4 }];
    const power = [{ t: 100, gpu: 0, watts: 70 }, { t: 2500, gpu: 0, watts: 300 }, { t: 3500, gpu: 0, watts: 320 }];
    writeFileSync(join(dir, 'telemetry.jsonl'), `${telemetry.map((x) => JSON.stringify(x)).join('\n')}\n`);
    writeFileSync(join(dir, 'power.jsonl'), `${power.map((x) => JSON.stringify({ ...x, epochMs: 1e12 + x.t })).join('\n')}\n`);
    const id = runIdOf('c-secret');
    expect((await getJson<RunView>(`/api/runs/${id}`)).body.hasPower).toBe(true);
    const { body } = await getJson<{ charts: Array<{ name: string; spec: Record<string, unknown> }> }>(`/api/runs/${id}/telemetry`);
    const chart = (name: string) => body.charts.find((c) => c.name === name)?.spec as { data: { values: Array<Record<string, number>> }; encoding: { x: { title: string } } };
    expect(body.charts.map((c) => c.name)).toEqual(['server-requests', 'server-kv-cache', 'gpu-power']);
    expect(chart('server-requests').data.values.map((v) => v['t'])).toEqual([2, 2, 3]);
    expect(chart('gpu-power').data.values.map((v) => [v['tS'], v['watts']])).toEqual([[2, 300], [3, 320]]);
    // One axis for every chart of the run page, named as the HTML report names it.
    const scatter = (await getJson<RequestsView>(`/api/runs/${id}/requests`)).body.scatter?.spec as { encoding: { x: { title: string } } };
    const titles = [...body.charts.map((c) => (c.spec as { encoding: { x: { title: string } } }).encoding.x.title), scatter.encoding.x.title];
    expect(new Set(titles)).toEqual(new Set(['time since the first request (s)']));
  });

  it('compares like with like; runs that differ need allow=1 and then carry the warning', async () => {
    const refused = await getJson<ApiError>(`/api/compare?ids=${runIdOf('a-vllm')},${runIdOf('b-llama')}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ canAllow: true });
    expect(refused.body.error).toMatch(/not comparable — they differ in model/);
    const forced = await getJson<CompareView>(`/api/compare?ids=${runIdOf('a-vllm')},${runIdOf('b-llama')}&allow=1`);
    expect(forced.status).toBe(200);
    expect(forced.body.mismatches[0]).toMatch(/model/);
    expect(forced.body.sections).toHaveLength(2);
    expect(forced.body.verdict?.table.rows.length).toBeGreaterThan(0);
    const unknown = await getJson<ApiError>('/api/runs/00000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/^no run with id 00000000/);
  });

  it('refuses other host names (DNS rebinding) and feed posts without the token', async () => {
    expect((await call('/api/runs', { host: `evil.example:${new URL(dash.url).port}` })).status).toBe(403);
    const batch = JSON.stringify({ name: 'x', dir: results, pid: process.pid });
    expect((await call('/api/live', { method: 'POST', body: batch, headers: { 'content-type': 'application/json' } })).status).toBe(403);
    expect((await call('/api/live', { method: 'POST', body: batch, headers: { 'x-inferbench-token': 'guess' } })).status).toBe(403);
  });

  it('serves its page and browser code from here only, under a CSP without inline scripts', async () => {
    const page = await call('/');
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self' 'unsafe-eval';/);
    expect(page.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    expect(page.text).not.toMatch(/<script>(?!<)/);
    for (const asset of ['/assets/app/main.js', '/assets/app/run-page.js', '/assets/vega.min.js', '/assets/vega-lite.min.js', '/assets/style.css']) {
      expect((await call(asset)).status, asset).toBe(200);
    }
    expect((await call('/assets/app/../../package.json')).status).toBe(404);
    expect((await call('/assets/app/Main.js')).status).toBe(404);
  });

  it('pushes a live run to open pages over server-sent events', async () => {
    const marker = readMarker(results);
    expect(marker?.url).toBe(dash.url);
    const events: string[] = [];
    const stream = await new Promise<import('node:http').IncomingMessage>((resolve) => get(new URL('/api/events', dash.url), resolve));
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    const got = new Promise<void>((resolve) =>
      stream.on('data', (d: Buffer) => {
        events.push(d.toString());
        if (events.join('').includes('event: live')) resolve();
      }),
    );
    const batch = { name: 'd-live', dir: join(results, 'd-live'), pid: process.pid, status: 'running', model: 'm<script>', engine: 'e', profile: 'constant', plannedStages: 2, stagesDone: 0, stageLabels: {}, startedAt: new Date().toISOString() };
    const post = await call('/api/live', { method: 'POST', body: JSON.stringify(batch), headers: { 'x-inferbench-token': marker?.token ?? '' } });
    expect(post.status).toBe(204);
    await got;
    stream.destroy();
    expect(events.join('')).toContain('"name":"d-live"');
    // Before its first row a live run is listed from its feed, and its page says it is pending.
    const { body } = await getJson<{ runs: RunRow[] }>('/api/runs');
    expect(body.runs.find((r) => r.name === 'd-live')).toMatchObject({ live: 'running', model: 'm<script>' });
    expect((await getJson<{ pending?: boolean }>(`/api/runs/${runIdOf('d-live')}`)).body.pending).toBe(true);
  });

  it('leaves its marker while serving and removes it on close', async () => {
    expect(existsSync(join(results, MARKER_FILE))).toBe(true);
    const other = await startDashboard({ resultsDir: join(results, 'not-a-run'), port: 0 });
    expect(readMarker(join(results, 'not-a-run'))?.url).toBe(other.url);
    await other.close();
    expect(existsSync(join(results, 'not-a-run', MARKER_FILE))).toBe(false);
  });
});
