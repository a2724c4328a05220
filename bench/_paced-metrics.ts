/**
 * A /metrics body for bench/_paced-server.ts with vLLM's metric names and shape: Python process lines, the
 * gauges and counters `inferbench run` reads (running, waiting, KV usage, preemptions, prefix cache), and the
 * latency and length histograms vLLM exports, each with its bucket ladder, `_sum` and `_count`. Its only use is
 * to make the client's telemetry sampling (twice a second) parse a body of a real engine's size, not a stub.
 */

const LATENCY_S = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const TOKENS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000];

const HISTOGRAMS: Array<[name: string, help: string, buckets: number[]]> = [
  ['vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', LATENCY_S],
  ['vllm:time_per_output_token_seconds', 'Histogram of time per output token in seconds.', LATENCY_S],
  ['vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', LATENCY_S],
  ['vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', LATENCY_S],
  ['vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', LATENCY_S],
  ['vllm:request_inference_time_seconds', 'Histogram of time spent in RUNNING phase for request.', LATENCY_S],
  ['vllm:request_prefill_time_seconds', 'Histogram of time spent in PREFILL phase for request.', LATENCY_S],
  ['vllm:request_decode_time_seconds', 'Histogram of time spent in DECODE phase for request.', LATENCY_S],
  ['vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', TOKENS],
  ['vllm:request_prompt_tokens', 'Number of prefill tokens processed.', TOKENS],
  ['vllm:request_generation_tokens', 'Number of generation tokens processed.', TOKENS],
  ['vllm:request_max_num_generation_tokens', 'Histogram of maximum number of requested generation tokens.', TOKENS],
  ['vllm:request_params_max_tokens', 'Histogram of the max_tokens request parameter.', TOKENS],
  ['vllm:request_params_n', 'Histogram of the n request parameter.', [1, 2, 5, 10, 20]],
];

function counterOrGauge(out: string[], name: string, type: 'gauge' | 'counter', help: string, labels: string, value: number): void {
  out.push(`# HELP ${name.replace(/_total$/, '')} ${help}`, `# TYPE ${name.replace(/_total$/, '')} ${type}`, `${name}{${labels}} ${value.toFixed(1)}`);
}

export function vllmSizedMetrics(model: string, running: number, requests: number, tokens: number): string {
  const m = `model_name="${model}"`;
  const out: string[] = [];
  for (const gen of [0, 1, 2]) out.push(`python_gc_objects_collected_total{generation="${gen}"} ${12000 + gen}.0`);
  for (const gen of [0, 1, 2]) out.push(`python_gc_collections_total{generation="${gen}"} ${900 + gen}.0`);
  out.push('python_info{implementation="CPython",major="3",minor="12",patchlevel="9",version="3.12.9"} 1.0');
  out.push('process_virtual_memory_bytes 8.1e+10', 'process_resident_memory_bytes 4.2e+09', 'process_start_time_seconds 1.7e+09');
  out.push('process_cpu_seconds_total 812.5', 'process_open_fds 212.0', 'process_max_fds 1.048576e+06');
  counterOrGauge(out, 'vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', m, running);
  counterOrGauge(out, 'vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', m, 0);
  counterOrGauge(out, 'vllm:gpu_cache_usage_perc', 'gauge', 'GPU KV-cache usage. 1 means 100 percent usage.', m, running / 1024);
  counterOrGauge(out, 'vllm:num_preemptions_total', 'counter', 'Cumulative number of preemption from the engine.', m, 0);
  counterOrGauge(out, 'vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', m, requests * 16);
  counterOrGauge(out, 'vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', m, 0);
  counterOrGauge(out, 'vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', m, requests * 16);
  counterOrGauge(out, 'vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', m, tokens);
  for (const reason of ['stop', 'length', 'abort']) out.push(`vllm:request_success_total{finished_reason="${reason}",${m}} ${reason === 'length' ? requests : 0}.0`);
  for (const [name, help, buckets] of HISTOGRAMS) {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    buckets.forEach((le, i) => out.push(`${name}_bucket{le="${le}",${m}} ${Math.round((requests * (i + 1)) / buckets.length)}.0`));
    out.push(`${name}_bucket{le="+Inf",${m}} ${requests}.0`, `${name}_count{${m}} ${requests}.0`, `${name}_sum{${m}} ${(requests * 0.66).toFixed(3)}`);
  }
  return out.join('\n') + '\n';
}
