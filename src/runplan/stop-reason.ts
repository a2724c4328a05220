/** Why a run stops after a row instead of trying the next load: the row says the requests themselves are wrong. */
import { shortError } from '../core/short-error.js';
import type { StageSummary } from '../metrics/summary.js';

/**
 * A row where nothing succeeded and every failure says the request itself is wrong (auth, path, format)
 * will not get better at the next rate: stop there with what to do.
 */
export function hopelessReason(s: StageSummary, api: string, url: string): string | undefined {
  // A server that accepts requests and answers none: every row after would wait the same way.
  if (s.serverSilent) {
    return `${s.label}: ${s.stoppedEarly ?? 'no reply from the server'}; not one request completed, so the run stops here (requests that take longer need a longer --stall-timeout)`;
  }
  // A row that stopped on a streak of fast failures with nothing to show: the next row would only repeat it.
  if (s.stoppedEarly && s.requests.ok === 0 && s.overSaturated === undefined) return `${s.label}: ${s.stoppedEarly}; the server is refusing every request${notAnInferenceServer(s)}`;
  if (s.requests.ok > 0 || s.requests.errors === 0 || !s.firstError) return undefined;
  const codes = Object.keys(s.errorsByCode);
  if (codes.length !== 1) return undefined;
  const m = /^E_HTTP_STATUS: HTTP (\d+)/.exec(s.firstError);
  const status = m ? Number(m[1]) : undefined;
  const first = shortError(s.firstError.replace(/^E_[A-Z_]+: /, ''));
  if (status === 401 || status === 403) return `every request was refused (${first}); pass the key with --api-key or OPENAI_API_KEY`;
  if (status === 404 || status === 405) return `the server has no ${api} endpoint at ${url} (${first}); check --target's path or pick another --api`;
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return `every request was rejected (${first}); check --model, --api and --extra-body`;
  }
  if (codes[0] === 'E_STREAM_PARSE') return `the replies are not ${api} responses (${first}); check --target or pick another --api`;
  if (codes[0] === 'E_CONNECT') return `cannot connect to ${url} (${first}); start the server or fix --target`;
  return undefined;
}

/**
 * A server that refuses POST itself (HTTP 501 Not Implemented, as `python3 -m http.server` answers) serves files or
 * pages, not generations: the port is probably the wrong one.
 */
export function notAnInferenceServer(s: Pick<StageSummary, 'firstError' | 'errorsByCode'>): string {
  const codes = Object.keys(s.errorsByCode);
  const only501 = codes.length === 1 && /^E_HTTP_STATUS: HTTP 501\b/.test(s.firstError ?? '');
  return only501 ? ' — HTTP 501 to a POST: this does not look like an inference server (check --target\'s port)' : '';
}
