import type { LiveMessage } from './api-types.js';

type LiveListener = (m: LiveMessage) => void;
type RunsListener = () => void;

const liveListeners = new Set<LiveListener>();
const runsListeners = new Set<RunsListener>();
let source: EventSource | undefined;

/**
 * One server-sent-event stream per page: `live` as runs progress (pushed by the dashboard when a run posts, at
 * most every 250 ms per run), `runs` when the results folder changed. EventSource reconnects by itself.
 */
export function connectLive(indicator: HTMLElement | null): void {
  if (source) return;
  source = new EventSource('/api/events');
  const show = (text: string): void => {
    if (indicator) indicator.textContent = text;
  };
  source.addEventListener('open', () => show('● live updates'));
  source.addEventListener('error', () => show('○ reconnecting…'));
  source.addEventListener('live', (ev) => {
    const m = JSON.parse((ev as MessageEvent<string>).data) as LiveMessage;
    for (const fn of liveListeners) fn(m);
  });
  source.addEventListener('runs', () => {
    for (const fn of runsListeners) fn();
  });
}

/** Listeners of the page on screen; the router drops them when the page changes. */
export function onLive(fn: LiveListener): () => void {
  liveListeners.add(fn);
  return () => liveListeners.delete(fn);
}

export function onRuns(fn: RunsListener): () => void {
  runsListeners.add(fn);
  return () => runsListeners.delete(fn);
}

/** Calls fn at most once per `ms` (the last call wins), for re-reads triggered by a burst of events. */
export function throttle(fn: () => void, ms: number): () => void {
  let timer: number | undefined;
  let again = false;
  return () => {
    if (timer !== undefined) {
      again = true;
      return;
    }
    fn();
    timer = window.setTimeout(function tick() {
      timer = undefined;
      if (again) {
        again = false;
        fn();
        timer = window.setTimeout(tick, ms);
      }
    }, ms);
  };
}
