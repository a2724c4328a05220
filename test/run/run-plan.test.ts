/**
 * The run plan (issue 30, item 1): `run --dry-run` resolves a plan against a real HTTP server without sending any
 * load; `run --plan FILE` runs a saved plan again with the same request ids, prompts and arrival schedule as the
 * run that saved it (its manifest.json carries the plan); a file that is not a plan of this version is one line,
 * exit 2. The server is a small one written here: it counts every request and keeps every prompt it was sent.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferbenchError } from '../../src/core/errors.js';
import { parseRunPlan, runPlanSchema, type RunPlan } from '../../src/runplan/schema.js';
import { k8sCommand } from '../../src/cli/k8s-command.js';
import { runCli } from '../helpers/cli.js';
import { json, readBody } from '../helpers/http-util.js';

interface Recorder {
  url: string;
  gets: number;
  posts: number;
  /** The prompt of each completion, by the id the server gave it (x-request-id). */
  prompts: Map<string, string>;
  close(): Promise<void>;
}

/** OpenAI completions, non-streaming, answered after 5 ms; /v1/models lists one model. */
async function startRecorder(): Promise<Recorder> {
  const rec = { gets: 0, posts: 0, prompts: new Map<string, string>() };
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET') {
      rec.gets++;
      req.resume();
      if (req.url === '/v1/models') return json(res, 200, { object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'test' }] });
      return json(res, 404, { error: { message: `no route ${req.url}` } });
    }
    rec.posts++;
    void readBody(req).then((raw) => {
      if (req.url !== '/v1/completions') return json(res, 404, { error: { message: `no route ${req.url}` } });
      const body = JSON.parse(raw) as { prompt: string; max_tokens?: number };
      const id = `r${rec.posts}`;
      rec.prompts.set(id, body.prompt);
      const n = body.max_tokens ?? 4;
      setTimeout(() => {
        res.setHeader('x-request-id', id);
        json(res, 200, {
          id,
          object: 'text_completion',
          model: 'm',
          choices: [{ index: 0, text: ' w'.repeat(n), finish_reason: 'length' }],
          usage: { prompt_tokens: 10, completion_tokens: n, total_tokens: 10 + n },
        });
      }, 5);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(rec, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

interface Sent {
  id: number;
  stage: number;
  scheduledAtMs: number;
  requestedPromptTokens: number;
  requestedOutputTokens: number;
  serverRequestId?: string;
}

function requestsOf(dir: string): Sent[] {
  return readFileSync(join(dir, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Sent)
    .sort((a, b) => a.id - b.id);
}

let server: Recorder;
let tmp: string;
beforeAll(async () => {
  server = await startRecorder();
  tmp = mkdtempSync(join(tmpdir(), 'inferbench-plan-'));
});
afterAll(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/**
 * An open loop: the arrival schedule, the prompts and the ids are all set by the plan. Each row's ids start at a base
 * fixed by its place in the run (load/benchmark.ts rowFirstRequestId), so a second row's ids and prompts do not depend
 * on how many requests the first row's cool-down happened to send.
 */
const FLAGS = ['--api', 'openai-completions', '--model', 'm', '--no-stream', '--tokenizer', 'approx', '--profile', 'constant', '--rate', '40'];
const LOAD = ['--max-requests', '6', '--prompt-dist', 'uniform:20,80', '--output-tokens', '4', '--seed', '7', '--idle-wait', '0'];

describe('run plan: --dry-run and --plan against a real HTTP server', () => {
  it('--dry-run prints a valid plan on stdout and sends no POST', async () => {
    const before = { gets: server.gets, posts: server.posts };
    const res = await runCli(['run', '--target', server.url, ...FLAGS, ...LOAD, '--no-progress', '--dry-run', '--out', join(tmp, 'never')]);
    expect(res.stderr).not.toMatch(/error/);
    expect(res.code).toBe(0);
    expect(server.posts - before.posts).toBe(0);
    expect(server.gets - before.gets).toBeGreaterThan(0);
    const plan = runPlanSchema.parse(JSON.parse(res.stdout)) as RunPlan;
    expect(plan.planVersion).toBe(1);
    expect(plan.target).toMatchObject({ url: server.url, api: 'openai-completions', model: 'm', resolved: { dialect: 'openai-completions', model: 'm' } });
    expect(plan.load).toMatchObject({ profile: 'constant', rates: [40], plannedRows: 1 });
    expect(plan.workload).toMatchObject({ seed: 7, promptDist: 'uniform:20,80', outputTokens: 4 });
    expect(plan.tokenizer.resolved?.kind).toBe('approx');
    expect(plan.window.maxRequests).toBe(6);
    // No load: nothing was written where --out points.
    expect(() => readFileSync(join(tmp, 'never', 'manifest.json'))).toThrow();
  });

  it('--plan re-runs the plan a run saved in manifest.json: same ids, prompts and arrival schedule on every row', async () => {
    const first = join(tmp, 'first');
    // Two rows: the second row's ids and prompts must not depend on how many requests the first one sent.
    const twoRows = FLAGS.map((f) => (f === '40' ? '40,60' : f));
    const a = await runCli(['run', '--target', server.url, ...twoRows, ...LOAD, '--no-progress', '--format', 'json', '--out', first]);
    expect(a.code, a.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(first, 'manifest.json'), 'utf8')) as { plan: unknown; options: unknown; argv: unknown };
    // Every earlier manifest field is still there, and the plan beside them.
    expect(manifest.options).toBeDefined();
    expect(manifest.argv).toBeDefined();
    const saved = parseRunPlan(JSON.stringify(manifest.plan), 'manifest plan');
    expect(saved.load.plannedRows).toBe(2);
    const planFile = join(tmp, 'plan.json');
    writeFileSync(planFile, JSON.stringify(saved));
    const second = join(tmp, 'second');
    const b = await runCli(['run', '--plan', planFile, '--no-progress', '--format', 'json', '--out', second]);
    expect(b.code, b.stderr).toBe(0);

    for (const stage of [0, 1]) {
      const ra = requestsOf(first).filter((r) => r.stage === stage);
      const rb = requestsOf(second).filter((r) => r.stage === stage);
      // The cool-down after each window sends as long as the measured requests take: compare the ids both runs sent.
      const common = Math.min(ra.length, rb.length);
      expect(common, `row ${stage}`).toBeGreaterThanOrEqual(6);
      let answered = 0;
      for (let i = 0; i < common; i++) {
        const x = ra[i] as Sent;
        const y = rb[i] as Sent;
        expect(y.id).toBe(x.id);
        expect(y.requestedPromptTokens).toBe(x.requestedPromptTokens);
        expect(y.requestedOutputTokens).toBe(x.requestedOutputTokens);
        // Requests the cool-down cancelled before their reply carry no server id: their prompts cannot be looked up.
        if (x.serverRequestId === undefined || y.serverRequestId === undefined) continue;
        answered++;
        expect(server.prompts.get(y.serverRequestId)).toBeDefined();
        expect(server.prompts.get(y.serverRequestId)).toBe(server.prompts.get(x.serverRequestId));
      }
      expect(answered, `row ${stage}`).toBeGreaterThanOrEqual(6);
      // Lengths drawn from the distribution, not all one length: the prompts really come from the plan's seed.
      expect(new Set(ra.slice(0, common).map((r) => r.requestedPromptTokens)).size).toBeGreaterThan(1);
      // The arrival schedule: every request at the same offset from the row's first arrival.
      const offsets = (rs: Sent[]): number[] => rs.slice(0, common).map((r) => r.scheduledAtMs - (rs[0] as Sent).scheduledAtMs);
      const ob = offsets(rb);
      offsets(ra).forEach((v, i) => expect(ob[i]).toBeCloseTo(v, 6));
    }
    // The rows' prompts differ (fresh items per row), and the second row starts at its own fixed base.
    expect(requestsOf(first).find((r) => r.stage === 1)?.id).toBe(1_000_000);
    // The second run's manifest carries the same plan (its outputs aside).
    const again = JSON.parse(readFileSync(join(second, 'manifest.json'), 'utf8')) as { plan: RunPlan };
    expect({ ...again.plan, outputs: undefined }).toEqual({ ...saved, outputs: undefined });
  });

  it('a file that is no plan of this version: one config error line naming the file', () => {
    const good = JSON.parse(readFileSync(join(tmp, 'plan.json'), 'utf8')) as Record<string, unknown>;
    const cases: Array<[string, RegExp]> = [
      ['not json', /^--plan p\.json: not JSON$/],
      ['{"kind":"Job"}', /^--plan p\.json: not an inferbench run plan \(no planVersion\)$/],
      [JSON.stringify({ ...good, planVersion: 0 }), /^--plan p\.json: plan version 0, this inferbench reads version 1$/],
      [JSON.stringify({ ...good, load: { profile: 'constant' } }), /^--plan p\.json: load\./],
      [JSON.stringify({ ...good, apiKey: 'sk-1' }), /^--plan p\.json: the plan: /],
    ];
    for (const [text, expected] of cases) {
      try {
        parseRunPlan(text, 'p.json');
        throw new Error(`${text}: accepted`);
      } catch (err) {
        expect(err).toBeInstanceOf(InferbenchError);
        expect((err as InferbenchError).code).toBe('E_CONFIG');
        expect((err as Error).message).toMatch(expected);
        expect((err as Error).message).not.toContain('\n');
      }
    }
  });

  it('CLI: a bad plan file, or a load flag beside --plan: one line, exit 2, nothing sent', async () => {
    const old = join(tmp, 'old.json');
    const good = JSON.parse(readFileSync(join(tmp, 'plan.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(old, JSON.stringify({ ...good, planVersion: 2 }));
    const cases: Array<[string[], RegExp]> = [
      [['--plan', old], /^error: --plan .*old\.json: plan version 2, this inferbench reads version 1/],
      [['--plan', join(tmp, 'plan.json'), '--rate', '5'], /^error: --rate does not go with --plan/],
    ];
    for (const [args, expected] of cases) {
      const before = server.posts;
      const res = await runCli(['run', ...args, '--out', join(tmp, 'bad')]);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr.trim().split('\n'), res.stderr).toHaveLength(1);
      expect(res.stderr).toMatch(expected);
      expect(server.posts).toBe(before);
    }
  });

  it("k8s: a pod's command runs the plan of the manifest's ConfigMap, as its shard", async () => {
    let manifest = '';
    const out = { write: (t: string) => void (manifest += t) };
    // No --target: the pod measures its own built-in simulator; a one-second start delay keeps the test short.
    k8sCommand(['--profile', 'constant', '--rate', '20', '--max-requests', '4', '--seed', '5'], { pods: '2', image: 'img', startDelay: '1', format: 'json', explicit: () => false }, { stdout: out, stderr: { write: () => undefined } });
    const items = (JSON.parse(manifest) as { items: Array<{ kind: string; data?: Record<string, string>; spec?: { template: { spec: { containers: Array<{ args: string[] }> } } } }> }).items;
    const planText = items.find((o) => o.kind === 'ConfigMap')?.data?.['plan.json'] ?? '';
    const args = items.find((o) => o.kind === 'Job')?.spec?.template.spec.containers[0]?.args ?? [];
    expect(args.slice(0, 4)).toEqual(['run', '--plan', '/etc/inferbench/plan.json', '--shard']);
    const planFile = join(tmp, 'k8s-plan.json');
    writeFileSync(planFile, planText);
    const dir = join(tmp, 'shard-1');
    // The pod's argv, with the plan file and the folder moved here and its index filled in.
    const res = await runCli(['run', '--plan', planFile, '--shard', '1/2', '--out', dir, '--no-progress', '--format', 'json']);
    expect(res.code, res.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { shard: { index: number; count: number; seed: number; startAt?: string } };
    expect(summary.shard).toMatchObject({ index: 1, count: 2, seed: 5 });
    expect(summary.shard.startAt).toBe(new Date(parseRunPlan(planText, 'p').distribution.startAt as number).toISOString());
    // Shard 1 of 2 sends every other arrival: its ids are odd (local × N + I).
    expect(requestsOf(dir).every((r) => r.id % 2 === 1)).toBe(true);
  });
});
