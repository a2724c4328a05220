/**
 * Ctrl-C / SIGTERM during a run: the first stops it (requests in flight are cancelled, every finished one kept);
 * a second quits at once, after flushing what the writer holds. After the run, while sockets and files are still
 * closing, any further signal quits at once too.
 *
 * Before the first row starts (the built-in simulator starting, the server's probes, the /tokenize calibration) there
 * is nothing to keep: the first signal says so in one line and the start-up steps, which listen to the same abort
 * (unlessStopped), end there — no table, exit 130.
 */
export interface RunSignals {
  /** A signal came (not a write failure, which aborts the same controller). */
  readonly received: boolean;
  /** Whether the first row has started: until then a signal stops the start-up. */
  readonly measuring: boolean;
  /** Aborted by a signal that comes while starting — not by a failed write (which stops the run, not the start-up). */
  readonly startup: AbortSignal;
  /** The first row starts: a signal from now on stops the rows and keeps what they measured. */
  startMeasuring(): void;
  release(): void;
}

/** Exit code of a run a signal stopped. */
export const SIGNAL_EXIT_CODE = 130;

export function stopOnSignals(abort: AbortController, stderr: NodeJS.WriteStream, flush: () => void): RunSignals {
  let signals = 0;
  let measuring = false;
  const startup = new AbortController();
  const quitNow = (): void => {
    flush();
    process.exit(SIGNAL_EXIT_CODE);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (++signals > 1) quitNow();
    stderr.write(
      measuring
        ? `\n${signal}: stopping — cancelling requests in flight, keeping every finished one (again to quit at once)\n`
        : `\n${signal}: stopped while starting, before any request was sent\n`,
    );
    if (!measuring) startup.abort();
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    get received() {
      return signals > 0;
    },
    get measuring() {
      return measuring;
    },
    startup: startup.signal,
    startMeasuring: () => {
      measuring = true;
    },
    release: () => {
      // The quit handlers go on before the run's come off: with no listener left, even for an instant, Node gives the
      // signal back its default action, and a Ctrl-C landing then kills the process without its exit code (130).
      if (signals > 0) {
        process.once('SIGINT', quitNow);
        process.once('SIGTERM', quitNow);
      }
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** What a start-up step throws once the run's signal has stopped it: the run ends with exit 130, nothing more said. */
export class StartupStopped extends Error {
  constructor() {
    super('stopped while starting');
    this.name = 'StartupStopped';
  }
}

/**
 * `step`, or StartupStopped as soon as `signal` aborts — without waiting for a step that does not listen to the
 * signal itself (a probe's socket, a worker starting): the caller stops at once, and what the step leaves open
 * closes itself (`onLate` gets a result that comes after all, to close it).
 */
export function unlessStopped<T>(step: Promise<T>, signal: AbortSignal | undefined, onLate?: (late: T) => void): Promise<T> {
  if (!signal) return step;
  if (signal.aborted) {
    step.then((late) => onLate?.(late), () => undefined);
    return Promise.reject(new StartupStopped());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      step.then((late) => onLate?.(late), () => undefined);
      reject(new StartupStopped());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    step.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(signal.aborted ? new StartupStopped() : err);
      },
    );
  });
}
