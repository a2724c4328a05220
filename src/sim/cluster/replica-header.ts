/**
 * Response headers of the simulated cluster fronts (kept apart from cluster.ts, which imports the server, so that the
 * server can name them too): the replica that served a request — for `--pd`, the decode engine that streamed it — and,
 * for `--pd`, the prefill engine that computed its prompt.
 */
export const REPLICA_HEADER = 'x-sim-replica';
export const PREFILL_REPLICA_HEADER = 'x-sim-prefill-replica';
