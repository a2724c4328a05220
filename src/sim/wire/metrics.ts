/** Prometheus text exposition (format 0.0.4) for the sim's live engine state. */
import type { LiveStats, WireContext } from './types.js';

export interface MetricLine {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  value: number;
  labels?: Record<string, string>;
}

function labelText(labels: Record<string, string>): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.length ? '{' + parts.join(',') + '}' : '';
}

function num(v: number): string {
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

export function renderMetrics(lines: readonly MetricLine[]): string {
  let out = '';
  const seen = new Set<string>();
  for (const l of lines) {
    if (!seen.has(l.name)) {
      seen.add(l.name);
      const family = l.type === 'counter' ? l.name.replace(/_total$/, '') : l.name;
      out += `# HELP ${family} ${l.help}\n# TYPE ${family} ${l.type}\n`;
    }
    out += `${l.name}${labelText(l.labels ?? {})} ${num(l.value)}\n`;
  }
  return out;
}

/** vLLM's names (V1, 0.11), labelled model_name; other engines fall back to these where they document none. */
export function vllmMetricLines(ctx: WireContext, s: LiveStats, only?: ReadonlySet<string>): MetricLine[] {
  const labels = { model_name: ctx.model };
  const all: MetricLine[] = [
    { name: 'vllm:num_requests_running', type: 'gauge', help: 'Number of requests in model execution batches.', value: s.running, labels },
    { name: 'vllm:num_requests_waiting', type: 'gauge', help: 'Number of requests waiting to be processed.', value: s.waiting, labels },
    { name: 'vllm:kv_cache_usage_perc', type: 'gauge', help: 'KV-cache usage. 1 means 100 percent usage.', value: s.kvCacheUsage, labels },
    { name: 'vllm:gpu_cache_usage_perc', type: 'gauge', help: 'GPU KV-cache usage. 1 means 100 percent usage.', value: s.kvCacheUsage, labels },
    { name: 'vllm:num_preemptions_total', type: 'counter', help: 'Cumulative number of preemption from the engine.', value: s.preemptionsTotal, labels },
    { name: 'vllm:prompt_tokens_total', type: 'counter', help: 'Number of prefill tokens processed.', value: s.promptTokensTotal, labels },
    { name: 'vllm:generation_tokens_total', type: 'counter', help: 'Number of generation tokens processed.', value: s.generationTokensTotal, labels },
    { name: 'vllm:request_success_total', type: 'counter', help: 'Count of successfully processed requests.', value: s.requestsFinishedTotal, labels },
  ];
  if (ctx.prefixCaching) {
    all.push(
      { name: 'vllm:prefix_cache_queries_total', type: 'counter', help: 'Prefix cache queries, in terms of number of queried tokens.', value: s.prefixCacheQueryTokensTotal, labels },
      { name: 'vllm:prefix_cache_hits_total', type: 'counter', help: 'Prefix cache hits, in terms of number of cached tokens.', value: s.prefixCacheHitTokensTotal, labels },
    );
  }
  if (ctx.specDecode) {
    all.push(
      { name: 'vllm:spec_decode_num_drafts_total', type: 'counter', help: 'Number of spec decoding drafts.', value: s.specDraftTokensTotal / ctx.specDecode.k, labels },
      { name: 'vllm:spec_decode_num_draft_tokens_total', type: 'counter', help: 'Number of draft tokens.', value: s.specDraftTokensTotal, labels },
      { name: 'vllm:spec_decode_num_accepted_tokens_total', type: 'counter', help: 'Number of accepted tokens.', value: s.specAcceptedTokensTotal, labels },
    );
  }
  return only ? all.filter((l) => only.has(l.name)) : all;
}
