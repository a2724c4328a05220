/**
 * Runs the fixed-delay server in its own process (so the client under test does not share its event
 * loop) and serves what the server actually did at GET /truth. Prints the URL on stdout.
 * argv: ttftMs itlMs promptTokens
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monotonicOffsetMs } from './clock-join.js';
import { startFixedDelayServer } from './openai-server.js';

const [ttftMs = 50, itlMs = 20, promptTokens = 10] = process.argv.slice(2).map(Number);
const server = await startFixedDelayServer({ ttftMs, itlMs, promptTokens });
const control = createServer((req, res) => {
  if (req.url === '/truth') {
    res.writeHead(200, { 'content-type': 'application/json' });
    // The client joins these times to its own clock through CLOCK_MONOTONIC, which both processes share.
    return res.end(JSON.stringify({ monotonicOffsetMs: monotonicOffsetMs(), truth: server.truth.splice(0) }));
  }
  res.writeHead(404);
  res.end();
});
await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
process.stdout.write(`${server.url} http://127.0.0.1:${(control.address() as AddressInfo).port}\n`);
process.on('SIGTERM', () => process.exit(0));
