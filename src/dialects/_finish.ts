import type { FinishFailureCode, FrameEvent } from './types.js';

/**
 * Finish reasons that mean "not a normal completion". A stream that ends with one of them is a failed
 * request with a code of its own, left out of latency and throughput figures — never a success whose
 * server "stopped on its own". Sources: /work/shared/research/wire-formats.md and the engines' code.
 *
 * | Dialect (servers)                  | Normal finishes (request succeeds)              | Failed finishes → code                       | Other failure shapes (→ code)                                   |
 * | ---------------------------------- | ----------------------------------------------- | -------------------------------------------- | --------------------------------------------------------------- |
 * | openai-chat, openai-completions    | stop, length, tool_calls, function_call,        | abort (vLLM, SGLang, lmdeploy: the engine    | `{"error":{…}}` / flat `{"object":"error"}` event, llama.cpp    |
 * | (vLLM, SGLang, lmdeploy, TGI v3,   | stop_sequence / eos_token (TGI), content_filter | dropped the request) → E_ABORTED_BY_SERVER;  | `error:` SSE field → E_STREAM_ERROR; non-2xx → E_HTTP_STATUS    |
 * | llama.cpp, Ollama, OpenAI)         | (OpenAI: a policy stop, a complete short reply),| error (vLLM ≥0.11 FinishReason.ERROR,        |                                                                 |
 * |                                    | parse_error (lmdeploy chat: its tool/reasoning  | lmdeploy) → E_FINISH_ERROR                   |                                                                 |
 * |                                    | parser failed on a finished generation)         |                                              |                                                                 |
 * | vllm (legacy /generate)            | none sent (end of body ends it)                 | —                                            | `{"error":…}` object → E_STREAM_ERROR; plain-text 500           |
 * | tgi (/generate_stream)             | length, eos_token, stop_sequence                | abort, error (never seen; mapped anyway)     | `{"error":"…","error_type":…}` event (validation, generation,   |
 * |                                    |                                                 |                                              | incomplete_generation) → E_STREAM_ERROR                         |
 * | sglang (native /generate)          | meta_info.finish_reason {type: length / stop}   | {type:"abort", message, status_code}         | `{"error":{"message"}}` event → E_STREAM_ERROR                  |
 * |                                    |                                                 | → E_ABORTED_BY_SERVER (message kept)         |                                                                 |
 * | lmdeploy (native /generate)        | {type: length / stop} (or the bare word)        | abort → E_ABORTED_BY_SERVER;                 | `{"error":…}` event → E_STREAM_ERROR                            |
 * |                                    |                                                 | error → E_FINISH_ERROR                       |                                                                 |
 * | llamacpp (/completion)             | stop_type eos / word / limit (older:            | abort, error (never seen; mapped anyway);    | `error:` SSE field or `{"error":{…}}` event → E_STREAM_ERROR    |
 * |                                    | stopped_eos / stopped_word / stopped_limit)     | stop_type none = no reason given, kept as ok |                                                                 |
 * | triton (generate_stream)           | none sent (end of body ends it)                 | —                                            | `{"error":"…"}` event → E_STREAM_ERROR                          |
 * | ollama (/api/generate)             | done_reason stop / length; load / unload carry  | abort, error (never seen; mapped anyway)     | `{"error":"…"}` line → E_STREAM_ERROR                           |
 * |                                    | no tokens and end as E_EMPTY                    |                                              |                                                                 |
 */
const FAILED_FINISHES: Readonly<Record<string, FinishFailureCode>> = {
  abort: 'E_ABORTED_BY_SERVER',
  error: 'E_FINISH_ERROR',
};

/**
 * The failure a finish reason stands for, or undefined for a normal finish. `detail` is the server's own
 * explanation when the format carries one (SGLang's `message`, its `status_code`).
 */
export function finishFailure(finish: string | undefined, detail?: string): FrameEvent['error'] | undefined {
  if (finish === undefined) return undefined;
  const code = FAILED_FINISHES[finish];
  if (code === undefined) return undefined;
  const what = code === 'E_ABORTED_BY_SERVER' ? 'the server aborted the generation' : 'the server ended the generation with an error';
  const tail = detail !== undefined && detail !== '' ? `: ${detail}` : '';
  return { message: `${what} (finish reason "${finish}")${tail}`, type: finish, code };
}
