import type { RunOptions } from '../config/run-options.js';
import type { RunWriter } from '../store/run-writer.js';
import type { Workload } from '../workload/types.js';

/** Characters of each prompt or message kept: enough to see what was sent, not a copy of a dataset. */
const MAX_CHARS = 1500;

/** sample-requests.json: the first few requests a run sends, as text, for the HTML report's workload section. */
export interface SampleRequestsDoc {
  requests: Array<{
    index: number;
    promptTokens: number;
    outputTokens: number;
    prompt: string;
    messages?: Array<{ role: string; content: string }>;
    truncated: boolean;
  }>;
}

const cut = (text: string): { text: string; cut: boolean } => (text.length > MAX_CHARS ? { text: `${text.slice(0, MAX_CHARS)}…`, cut: true } : { text, cut: false });

/** The workload's first `n` items (deterministic: the same seed sends the same ones), each text cut at MAX_CHARS. */
export function sampleRequests(workload: Workload, n = 3): SampleRequestsDoc {
  const count = Math.min(n, workload.size ?? n);
  const requests = Array.from({ length: count }, (_, index) => {
    const item = workload.item(index);
    const prompt = cut(item.prompt);
    const messages = item.messages?.map((m) => ({ role: m.role, ...cut(m.content) }));
    return {
      index,
      promptTokens: item.promptTokens,
      outputTokens: item.outputTokens,
      prompt: prompt.text,
      ...(messages ? { messages: messages.map((m) => ({ role: m.role, content: m.text })) } : {}),
      truncated: prompt.cut || (messages?.some((m) => m.cut) ?? false),
    };
  });
  return { requests };
}

/** sample-requests.json in the run folder (a grid: its first cell's requests); none with `--records none`. */
export function writeSampleRequests(writer: RunWriter, opts: RunOptions, setup: { workload: Workload; workloadFor: (i: number, o: number) => Workload }): void {
  if (opts.records.kind === 'none') return;
  const first = opts.profile === 'grid' ? setup.workloadFor(opts.inputLens?.[0] ?? opts.promptTokens, opts.outputLens?.[0] ?? opts.outputTokens) : setup.workload;
  writer.writeJson('sample-requests.json', sampleRequests(first));
}
