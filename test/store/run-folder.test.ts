/**
 * Issue 30 item 5: one results schema. What the code builds as a run summary is what the store reads back (no field
 * the code writes is dropped on the way), and one writer assembles a whole run folder.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummaryDoc } from '../../src/report/run-summary.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { openRunDir } from '../../src/store/run-store.js';

const root = mkdtempSync(join(tmpdir(), 'ib-run-folder-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const stats = { count: 40, mean: 120.5, median: 118, p90: 150, p95: 160, p99: 171.25, min: 90, max: 180, stddev: 12.5 };

/** A run summary with the fields that runs, embeddings runs, shards and steady-state rows write. */
function fullDoc(outDir: string): RunSummaryDoc {
  return {
    tool: { name: 'inferbench', version: 'test' },
    runId: 'r1',
    createdAt: '2026-11-28T10:00:00.000Z',
    finishedAt: '2026-11-28T10:01:00.000Z',
    layout: 'sweep',
    context: { model: 'm', engine: 'vllm (simulated)', gpu: 'A100-80GB', gpus: 1, promptTokens: 256, outputTokens: 64 },
    target: { url: 'http://127.0.0.1:1', api: 'openai-completions', engine: 'vllm', model: 'm', simulated: true },
    profile: 'constant',
    workload: 'synthetic',
    workloadSpec: { kind: 'synthetic', promptTokens: { kind: 'fixed', value: 256 }, inputsPerRequest: 4, images: { count: 1, width: 64, height: 64 } },
    windowRules: 'steady window',
    stages: [
      {
        index: 0,
        label: 'asynchronous@2.00 req/sec',
        kind: 'open',
        targetRate: 2,
        durationS: 20,
        startedAtMs: 1000.5,
        endedAtMs: 31000.25,
        window: { rule: 'steady', startS: 5, lengthS: 20, fromMs: 6000.5, toMs: 26000.5, inFlightAtOpen: 3, inFlightAtClose: 3 },
        requests: { total: 40, ok: 40, errors: 0, incomplete: 0, warmup: 10 },
        errorsByCode: {},
        failureShare: 0,
        requestThroughput: 2,
        inputsPerRequest: 4,
        inputThroughput: 8,
        outputTokenThroughput: 128,
        promptTokenThroughput: 512,
        totalTokenThroughput: 640,
        sendRate: 2,
        completionRate: 2,
        belowTarget: false,
        meanConcurrency: 3,
        metrics: { ttftMs: stats, e2eMs: { ...stats, mean: 900 } },
        outputLengthMismatches: 0,
        promptLengthMismatches: 0,
        tokenCountSources: { 'server-usage': 40 },
        interrupted: false,
      },
    ],
    shard: { index: 0, count: 2, runKey: 'k', seed: 1, startedAt: '2026-11-28T10:00:00.000Z', barrier: '/tmp/b', epochOriginMs: 1764324000000 },
    interrupted: false,
    notes: [],
    outDir,
  };
}

function record(id: number): RequestRecord {
  return {
    id, stage: 0, warmup: false, status: 'ok', scheduledAtMs: id * 500, sentAtMs: id * 500 + 1, dispatchLagMs: 1, clientQueueMs: 0, endAtMs: id * 500 + 901,
    ttftMs: 120, e2eMs: 900, chunkGapsMs: [10, 11], chunks: 3, requestedPromptTokens: 256, requestedOutputTokens: 64, promptTokens: 256,
    outputTokens: 64, tokenCountSource: 'server-usage', promptTokenSource: 'server-usage', clientPromptTokens: 256,
  };
}

describe('one results schema', () => {
  it('a summary the code builds reads back through the store with every field it wrote', () => {
    const dir = join(root, 'plain');
    mkdirSync(dir);
    const doc = fullDoc(dir);
    writeFileSync(join(dir, 'summary.json'), JSON.stringify({ schemaVersion: 1, ...doc }));
    const { summary } = openRunDir(dir);
    // Before the one schema, the store's own copy of the shape dropped startedAtMs/endedAtMs, the window's
    // fromMs/toMs, the embeddings figures, workloadSpec.inputsPerRequest/images and shard.barrier on reading.
    expect(summary).toEqual(doc);
  });

  it('reads a newer file as far as it knows it: an unknown metric name is left out, like an unknown field', () => {
    const dir = join(root, 'newer');
    mkdirSync(dir);
    const doc = fullDoc(dir);
    const stage = { ...doc.stages[0], metrics: { ttftMs: stats, someFutureMs: stats } };
    writeFileSync(join(dir, 'summary.json'), JSON.stringify({ schemaVersion: 2, ...doc, stages: [stage] }));
    const run = openRunDir(dir);
    expect(Object.keys(run.summary.stages[0]?.metrics ?? {})).toEqual(['ttftMs']);
    expect(run.warnings[0]).toMatch(/schema 2, newer than this inferbench/);
  });
});

describe('writeRunFolder', () => {
  it('writes manifest, requests, summary and the given tables, and the store reads the folder back', async () => {
    const { writeRunFolder } = await import('../../src/store/run-folder.js');
    const dir = join(root, 'whole');
    const doc = fullDoc(dir);
    writeRunFolder(dir, { manifest: { command: 'merge', seed: 7 }, summary: doc, complete: true, records: [record(1), record(2)], files: { 'table.md': '| a |\n' } });
    expect(readdirSync(dir).sort()).toEqual(['manifest.json', 'requests.jsonl', 'summary.json', 'table.md']);
    const lines = readFileSync(join(dir, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l['schemaVersion'], l['id']])).toEqual([[1, 1], [1, 2]]);
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))).toMatchObject({ schemaVersion: 1, complete: true, runId: 'r1' });
    const run = openRunDir(dir);
    expect(run.summary).toEqual(doc);
    expect(run.manifest).toMatchObject({ command: 'merge', seed: 7 });
    expect(readFileSync(join(dir, 'table.md'), 'utf8')).toBe('| a |\n');
  });

  it('leaves out requests.jsonl when there are no records, and refuses a non-empty folder in one line', async () => {
    const { writeRunFolder } = await import('../../src/store/run-folder.js');
    const dir = join(root, 'no-records');
    writeRunFolder(dir, { manifest: { command: 'import' }, summary: fullDoc(dir) });
    expect(readdirSync(dir).sort()).toEqual(['manifest.json', 'summary.json']);
    expect(() => writeRunFolder(dir, { manifest: { command: 'import' }, summary: fullDoc(dir) }, { refuseNonEmpty: { flag: '--out', shown: 'x', hint: 'pass a new folder' } })).toThrow(
      '--out x is not empty',
    );
  });

  it('writes nothing when the summary is not what the store reads', async () => {
    const { writeRunFolder } = await import('../../src/store/run-folder.js');
    const dir = join(root, 'bad');
    const doc = fullDoc(dir);
    const broken = { ...doc, stages: [{ ...doc.stages[0], label: 42 }] } as unknown as RunSummaryDoc;
    expect(() => writeRunFolder(dir, { manifest: { command: 'predict' }, summary: broken })).toThrow(/does not match the results schema \(.*at stages\.0\.label/);
    expect(existsSync(dir)).toBe(false);
  });
});
