import { describe, expect, it } from 'vitest';
import { SAMPLED_SERIES, parsePrometheus, sampleFromMetrics, summarizeSamples } from '../../src/transport/prometheus.js';

const TEXTS: Record<string, string> = {
  vllm: `# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 7.0\nvllm:num_requests_waiting{model_name="m"} 3.0\nvllm:kv_cache_usage_perc{model_name="m"} 0.42\nvllm:num_preemptions_total{model_name="m"} 5.0\n`,
  sglang: `sglang:num_running_reqs{model_name="m"} 7\nsglang:num_queue_reqs{model_name="m"} 3\nsglang:token_usage{model_name="m"} 0.42\n`,
  tgi: `tgi_batch_current_size 7\ntgi_queue_size 3\n`,
  llamacpp: `llamacpp:requests_processing 7\nllamacpp:requests_deferred 3\nllamacpp:kv_cache_usage_ratio 0.42\n`,
  triton: `nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="active",version="1"} 7\nnv_trt_llm_request_metrics{model="tensorrt_llm",request_type="waiting",version="1"} 3\nnv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="max",model="tensorrt_llm",version="1"} 100\nnv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used",model="tensorrt_llm",version="1"} 42\n`,
};

describe('server telemetry from Prometheus text', () => {
  for (const [engine, text] of Object.entries(TEXTS)) {
    it(`${engine}: running, waiting and KV usage in engine-neutral terms`, () => {
      const s = sampleFromMetrics(parsePrometheus(text), 1);
      expect(s.running).toBe(7);
      expect(s.waiting).toBe(3);
      if (engine !== 'tgi') expect(s.kvUsage).toBeCloseTo(0.42, 10);
    });
  }

  it('summarizes a row: peaks, mean KV usage and preemptions during the row', () => {
    const row = summarizeSamples([
      { atMs: 0, running: 1, waiting: 0, kvUsage: 0.2, preemptionsTotal: 5 },
      { atMs: 1, running: 9, waiting: 4, kvUsage: 0.6, preemptionsTotal: 8 },
    ]);
    expect(row).toEqual({ samples: 2, peakRunning: 9, peakWaiting: 4, peakKvUsage: 0.6, meanKvUsage: 0.4, preemptions: 3 });
  });

  it('the telemetry sampler reads only the series it uses, with the same sample (issue 36, item 9)', () => {
    // An engine's /metrics is mostly histogram buckets: the sampler skips every line of a series it does not read.
    const buckets = Array.from({ length: 200 }, (_, i) => `vllm:e2e_request_latency_seconds_bucket{le="${i}",model_name="m"} ${i}.0`).join('\n');
    for (const text of [...Object.values(TEXTS), `${TEXTS['vllm']}${buckets}\nvllm:prefix_cache_hits_total{model_name="m"} 9.0\nvllm:prefix_cache_queries_total{model_name="m"} 30.0\n`]) {
      const filtered = parsePrometheus(text, SAMPLED_SERIES);
      expect(sampleFromMetrics(filtered, 1)).toEqual(sampleFromMetrics(parsePrometheus(text), 1));
      expect([...filtered.keys()].every((name) => SAMPLED_SERIES.has(name))).toBe(true);
    }
    expect(parsePrometheus(buckets, SAMPLED_SERIES).size).toBe(0);
  });

  it('ignores comments, malformed lines and non-numbers', () => {
    const m = parsePrometheus('# c\nbad line\nx{a="1"} NaNx\ny 2 1700000000\n');
    expect([...m.keys()]).toEqual(['y']);
  });
});

describe('Prometheus text with awkward label values (issue 17, item 11)', () => {
  it('reads label values holding }, escaped quotes, backslashes and newlines', () => {
    const m = parsePrometheus(
      [
        'vllm:num_requests_running{model_name="odd}name",engine="0"} 7',
        'vllm:num_requests_waiting{model_name="say \\"hi\\" {x}",path="C:\\\\models\\n"} 3 1700000000',
        'vllm:kv_cache_usage_perc{model_name="a,b=c",} 0.25',
      ].join('\n'),
    );
    expect(m.get('vllm:num_requests_running')).toEqual([{ labels: { model_name: 'odd}name', engine: '0' }, value: 7 }]);
    expect(m.get('vllm:num_requests_waiting')).toEqual([{ labels: { model_name: 'say "hi" {x}', path: 'C:\\models\n' }, value: 3 }]);
    expect(sampleFromMetrics(m, 0)).toEqual({ atMs: 0, running: 7, waiting: 3, kvUsage: 0.25 });
  });

  it('matches TensorRT-LLM series by the label value, not by text that merely looks like it', () => {
    const text = [
      'nv_trt_llm_request_metrics{model="ens}emble",request_type="active",version="1"} 5',
      'nv_trt_llm_request_metrics{model="x",request_type="waiting",version="1"} 2',
      'nv_trt_llm_request_metrics{model="request_type=\\"active\\"",request_type="context",version="1"} 9',
    ].join('\n');
    const s = sampleFromMetrics(parsePrometheus(text), 0);
    expect([s.running, s.waiting]).toEqual([5, 2]);
  });

  it('skips lines cut inside a label value or missing the value', () => {
    expect([...parsePrometheus('a{x="unclosed} 1\nb{x="1"}\nc{x="1"}2\nd{x="1"} 4\n').keys()]).toEqual(['d']);
  });
});
