/**
 * Child process for bench/_overhead-run.ts: the least a Node client can do against the paced server — N keep-alive
 * sockets that write a request and read the reply into one shared buffer (net's `onread`), with no HTTP parsing,
 * no time stamps and no records; the next request goes out when the reply's last chunk arrives. Its CPU per token is
 * the floor of any client on Node's event loop (one wake-up and one read per packet), measured by the same
 * incremental method as the rest of the paced section (readings at N and 3N completed requests).
 *
 *   tsx bench/_bare-reader.ts <url> <streams> <n> <outputTokens>   → prints one JSON line
 */
import { connect } from 'node:net';

const [url, streamsArg, nArg, outArg] = process.argv.slice(2);
const target = new URL(url ?? '');
const STREAMS = Number(streamsArg);
const N = Number(nArg);
const OUTPUT = Number(outArg);
const body = JSON.stringify({
  model: 'paced-model', prompt: 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen',
  max_tokens: OUTPUT, stream: true, stream_options: { include_usage: true }, ignore_eos: true, min_tokens: OUTPUT,
});
const request =
  `POST /v1/completions HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\naccept: text/event-stream\r\n` +
  `content-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`;
const BUFFER = Buffer.allocUnsafe(64 * 1024);
/** The end of a chunked reply: the zero-size last chunk. */
const LAST_CHUNK = '0\r\n\r\n';

let completed = 0;
let sent = 0;
let reads = 0;
interface Reading {
  cpu: NodeJS.CpuUsage;
  switches: number;
  reads: number;
  atMs: number;
}
let first: Reading | undefined;
const read = (): Reading => ({ cpu: process.cpuUsage(), switches: process.resourceUsage().voluntaryContextSwitches, reads, atMs: performance.now() });

function report(second: Reading): void {
  const f = first as Reading;
  const tokens = 2 * N * OUTPUT;
  const user = second.cpu.user - f.cpu.user;
  const kernel = second.cpu.system - f.cpu.system;
  process.stdout.write(`${JSON.stringify({
    tokens, userUsPerToken: user / tokens, kernelUsPerToken: kernel / tokens, totalUsPerToken: (user + kernel) / tokens,
    readsPerToken: (second.reads - f.reads) / tokens, wakeupsPerToken: (second.switches - f.switches) / tokens, wallS: (second.atMs - f.atMs) / 1000,
  })}\n`);
  process.exit(0);
}

function open(): void {
  const socket = connect({
    host: target.hostname, port: Number(target.port), noDelay: true,
    onread: {
      buffer: BUFFER,
      callback: (n: number, buf: Uint8Array) => {
        reads++;
        if (Buffer.from(buf.buffer, buf.byteOffset + Math.max(0, n - 16), Math.min(n, 16)).toString('latin1').endsWith(LAST_CHUNK)) {
          completed++;
          if (completed === N) first = read();
          if (completed === 3 * N) report(read());
          if (sent < 3 * N + STREAMS) {
            sent++;
            socket.write(request);
          }
        }
        return true;
      },
    },
  });
  socket.on('connect', () => {
    sent++;
    socket.write(request);
  });
  socket.on('error', (err) => {
    process.stderr.write(`bare reader: ${err.message}\n`);
    process.exit(1);
  });
}

for (let i = 0; i < STREAMS; i++) open();
