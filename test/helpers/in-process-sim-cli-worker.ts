/**
 * Worker-thread entry of test/helpers/in-process-sim-cli.ts: simulators served from this thread's own event loop, as
 * `inferbench sim` serves from its own process, so an in-process client's timestamps and the simulators' token writes
 * do not wait on each other. An `argv` item is `inferbench sim ARGV` itself (main.ts's program: the same flag parsing
 * and sim command), its URL read from its banner; a `cluster` item is startSimCluster, whose router counts are asked for.
 */
import { Writable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import { runCliInProcess } from '../../src/cli/main.js';
import { startSimCluster, type SimCluster, type SimClusterOptions } from '../../src/sim/cluster/cluster.js';

type Item = { argv: string[] } | { cluster: SimClusterOptions };

/** `inferbench sim ARGV` in this thread: resolves with the URL its banner names (it serves until the thread ends). */
function simCli(argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const sink = (onText: (t: string) => void): NodeJS.WriteStream => new Writable({
      write(chunk: Buffer, _enc, done) {
        onText(chunk.toString());
        done();
      },
    }) as unknown as NodeJS.WriteStream;
    const stdout = sink((t) => {
      out += t;
      const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    const stderr = sink((t) => void (err += t));
    void runCliInProcess(argv, { stdout, stderr }).then((code) => reject(new Error(`inferbench ${argv.join(' ')} exited ${code}: ${err}`)));
  });
}

const clusters: Array<SimCluster | undefined> = [];
const urls: string[] = [];
for (const item of workerData as Item[]) {
  const cluster = 'cluster' in item ? await startSimCluster(item.cluster) : undefined;
  clusters.push(cluster);
  urls.push(cluster ? cluster.url : await simCli((item as { argv: string[] }).argv));
}
parentPort?.postMessage({ urls });
parentPort?.on('message', (msg: unknown) => {
  if (msg === 'routed') parentPort?.postMessage({ routed: clusters.map((c) => c?.routed() ?? []) });
});
