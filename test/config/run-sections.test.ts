import { describe, expect, it } from 'vitest';
import { resolveRunOptions, resolveRunSections, type RawRunFlags } from '../../src/config/run-options.js';
import { resolveEmbeddingOptions } from '../../src/config/embedding-options.js';
import { resolveImageOptions } from '../../src/config/image-options.js';

/** Freezes an object and everything in it, so a resolver that writes to its input throws. */
function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

const FLAG_SETS: RawRunFlags[] = [
  {},
  { rate: '1,2,inf', maxRequests: '20', seed: '7' },
  { concurrency: '4', warmup: '2s', maxSeconds: '10', steadyState: true, repeat: '3' },
  { target: 'http://127.0.0.1:9/v1', api: 'openai-embeddings', batchSize: '4', profile: 'capacity', capacityAxis: 'concurrency', slo: 'e2e:150' },
  { images: '2', imageSize: '640x480', api: 'openai-chat', model: 'Qwen2-VL-7B-Instruct' },
  { rate: '10,20', shard: '0/2', barrier: '/tmp/b', startAt: '2026-11-24T10:00:00Z', workers: '2', timeoutIdle: '1m', label: 'x' },
];

/** Issue 30, item 3: options in sections; resolvers return values and never change what they are given. */
describe('run options in sections', () => {
  it('the sections hold every option once, and flattened they are the RunOptions', () => {
    for (const raw of FLAG_SETS) {
      const sections = resolveRunSections(raw, {});
      const keys = Object.values(sections).flatMap((s) => Object.keys(s));
      expect(new Set(keys).size, JSON.stringify(raw)).toBe(keys.length);
      expect(Object.assign({}, ...Object.values(sections))).toEqual(resolveRunOptions(raw, {}));
    }
    const s = resolveRunSections({ rate: '4', shard: '0/2', drain: '5', json: true, target: 'http://127.0.0.1:1' }, {});
    expect(s.load).toMatchObject({ profile: 'constant', rates: [4] });
    expect(s.distribution.shard).toEqual({ index: 0, count: 2 });
    expect(s.window).toMatchObject({ drainSeconds: 5, maxSeconds: 5 });
    expect(s.outputs.json).toBe(true);
    expect(s.target.target).toBe('http://127.0.0.1:1');
  });

  it('resolution never changes the raw flags (frozen input resolves)', () => {
    for (const raw of FLAG_SETS) expect(() => resolveRunOptions(deepFreeze({ ...raw }), {}), JSON.stringify(raw)).not.toThrow();
  });

  it('the embeddings and image resolvers return what they decide instead of writing it into the options', () => {
    const opts = deepFreeze(resolveRunOptions({ api: 'openai-chat', target: 'http://127.0.0.1:9' }, {}));
    const embeddingCtx = deepFreeze({ ...opts, api: 'openai-embeddings' as const });
    const p: string[] = [];
    expect(resolveEmbeddingOptions({ batchSize: '8' }, embeddingCtx, p)).toEqual({ batchSize: 8, outputTokens: 0, stream: false, forceLength: false });
    expect(resolveEmbeddingOptions({}, opts, p)).toBeUndefined();
    expect(resolveImageOptions({ images: '2', imageSize: '64x32' }, opts, p)).toEqual({ count: 2, width: 64, height: 32 });
    expect(p).toEqual([]);
  });

  it("the table's 'goes with' checks keep their one-line problems", () => {
    expect(() => resolveRunOptions({ barrier: '/tmp/b', rate: '3' }, {})).toThrow('--barrier goes with --shard I/N (shards meet there before every row)');
    expect(() => resolveRunOptions({ imageSize: '64x64' }, {})).toThrow('--image-size goes with --images N (the images per request), e.g. --images 1 --image-size 1024x768');
    expect(() => resolveRunOptions({ thinkTime: '5' }, {})).toThrow('--think-time goes with --turns');
    // A malformed value is its own problem, not also "goes with".
    expect(() => resolveRunOptions({ timeScale: 'x' }, {})).toThrow(/^--time-scale "x" is not a number > 0$/);
  });
});
