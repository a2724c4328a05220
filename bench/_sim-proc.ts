/**
 * Child process: `inferbench sim` through the real CLI entry, plus an IPC probe the benches use to
 * join clocks (see _clock.ts) and read the server's CPU time.
 */
import { main } from '../src/cli/main.js';
import { clockSample } from './_clock.js';

process.on('message', (m: unknown) => {
  if (m === 'clock') process.send?.({ clock: clockSample() });
  else if (m === 'usage') {
    const c = process.cpuUsage();
    process.send?.({ usage: { cpuMicros: c.user + c.system, rssBytes: process.memoryUsage().rss } });
  }
});
await main(['sim', ...process.argv.slice(2)]);
process.disconnect?.();
