/**
 * Ctrl-C / SIGTERM during a run: the first stops it (requests in flight are cancelled, every finished one kept);
 * a second quits at once, after flushing what the writer holds. After the run, while sockets and files are still
 * closing, any further signal quits at once too.
 */
export function stopOnSignals(abort: AbortController, stderr: NodeJS.WriteStream, flush: () => void): { release(): void } {
  let signals = 0;
  const quitNow = (): void => {
    flush();
    process.exit(130);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (++signals > 1) quitNow();
    stderr.write(`\n${signal}: stopping — cancelling requests in flight, keeping every finished one (again to quit at once)\n`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
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
