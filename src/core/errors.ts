/** Stable error codes. Request failures carry one of these as data; user mistakes surface as one line. */
export type ErrorCode =
  | 'E_CONFIG' // bad flag, config or file: exit 2
  | 'E_USAGE' // bad command line: exit 2
  | 'E_CONNECT' // could not open a connection
  | 'E_CONNECT_TIMEOUT'
  | 'E_HTTP_STATUS' // non-2xx reply
  | 'E_TIMEOUT_FIRST_BYTE' // no response headers / first byte in time
  | 'E_TIMEOUT_IDLE' // gap between chunks exceeded
  | 'E_TIMEOUT_TOTAL' // whole request exceeded
  | 'E_STREAM_PARSE' // a frame that is not valid for the dialect
  | 'E_STREAM_ERROR' // the server sent an error event inside the stream
  | 'E_STREAM_TRUNCATED' // stream ended without its final event
  | 'E_RESET' // connection closed or reset mid-response
  | 'E_EMPTY' // a successful reply that produced no output token
  | 'E_ABORTED_BY_SERVER' // the server ended the generation as aborted (finish reason `abort`)
  | 'E_FINISH_ERROR' // the server ended the generation with an error finish reason (`error`)
  | 'E_ABORTED' // cancelled because the run stopped
  | 'E_INTERNAL';

/** An error with a stable code. `hint` says what the user can do about it. */
export class InferbenchError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  constructor(code: ErrorCode, message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'InferbenchError';
    this.code = code;
    this.hint = options?.hint;
  }
}

/** Shorthand for configuration / usage mistakes (exit code 2). */
export function configError(message: string, hint?: string): InferbenchError {
  return new InferbenchError('E_CONFIG', message, hint === undefined ? undefined : { hint });
}

export function isUserError(err: unknown): err is InferbenchError {
  return err instanceof InferbenchError && (err.code === 'E_CONFIG' || err.code === 'E_USAGE');
}
