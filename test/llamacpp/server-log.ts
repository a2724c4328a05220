/**
 * Reads llama-server's own per-request timings from its log. For every finished task it prints
 *   slot print_timing: id  0 | task 12 | prompt eval time =   10.00 ms /   512 tokens (...)
 *   slot print_timing: id  0 | task 12 |        eval time =  300.00 ms /   128 tokens (  2.36 ms per token, ...)
 * where "eval time" spans first → last generated token and "ms per token" is that span / (tokens − 1):
 * the same definition as inferbench's ITL (and the `timings.predicted_per_token_ms` of its responses).
 */
export interface ServerTaskTiming {
  task: number;
  slot: number;
  promptMs: number;
  /** Prompt tokens the server evaluated (its prompt length less any tokens served from its cache). */
  promptEvaluated: number;
  genMs: number;
  genTokens: number;
  /** (last − first generated token) / (tokens − 1), ms. */
  perTokenMs: number;
}

const PROMPT = /id\s+(\d+) \| task (\d+) \| prompt eval time =\s*([\d.]+) ms \/\s*(\d+) tokens/;
const EVAL = /id\s+(\d+) \| task (\d+) \|\s+eval time =\s*([\d.]+) ms \/\s*(\d+) tokens \(\s*([\d.]+) ms per token/;

/** Every completed task in the log text, in the order the server finished them. */
export function parseServerTimings(log: string): ServerTaskTiming[] {
  const prompts = new Map<number, { promptMs: number; promptEvaluated: number }>();
  const out: ServerTaskTiming[] = [];
  for (const line of log.split('\n')) {
    const p = PROMPT.exec(line);
    if (p) {
      prompts.set(Number(p[2]), { promptMs: Number(p[3]), promptEvaluated: Number(p[4]) });
      continue;
    }
    const e = EVAL.exec(line);
    if (!e) continue;
    const task = Number(e[2]);
    const prompt = prompts.get(task);
    if (prompt === undefined) continue;
    out.push({
      task,
      slot: Number(e[1]),
      ...prompt,
      genMs: Number(e[3]),
      genTokens: Number(e[4]),
      // From the span (printed to 0.01 ms) rather than the rounded per-token figure beside it.
      perTokenMs: Number(e[4]) > 1 ? Number(e[3]) / (Number(e[4]) - 1) : Number(e[5]),
    });
  }
  return out;
}
