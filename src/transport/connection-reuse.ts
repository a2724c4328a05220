import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { Dispatcher, Pool } from 'undici';

/** The connection one attempt of a request was written on. */
export interface WrittenOn {
  socket?: Socket;
  /** The connection had already carried a reply when this request was written on it. */
  reused: boolean;
}

/** Replies (response heads) each connection has carried. */
const repliesOn = new WeakMap<Socket, number>();
/**
 * The attempt undici is writing right now. undici calls the handler's onRequestStart and then publishes
 * `undici:client:sendHeaders` (with the socket) in one synchronous write of that request, so nothing else
 * can be written in between: the next publication belongs to the attempt that registered last.
 */
let writing: WrittenOn | undefined;

subscribe('undici:client:sendHeaders', (message) => {
  const attempt = writing;
  writing = undefined;
  const socket = (message as { socket?: Socket }).socket;
  if (!attempt || !socket) return;
  attempt.socket = socket;
  attempt.reused = (repliesOn.get(socket) ?? 0) > 0;
});

/** Call from onRequestStart: the socket this attempt is written on is filled in as its headers go out. */
export function watchWrite(): WrittenOn {
  const attempt: WrittenOn = { reused: false };
  writing = attempt;
  return attempt;
}

/** Errors that mean the peer closed or reset the connection (not a timeout, not our own abort). */
const CLOSED_BY_PEER = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  return e?.code ?? e?.cause?.code;
}

/**
 * How a server treats kept-alive connections, learned as the run goes, and the one retry rule.
 *
 * Some servers (llama-server's cpp-httplib) answer `Connection: keep-alive` and then close the connection
 * right after each reply. A request written on such a connection in that moment never reaches the server;
 * the client sees the connection close. The rule: an attempt is retried once, on a fresh connection,
 * when (1) the connection closed or was reset before any byte of the reply arrived, (2) that connection had
 * already carried a reply (it was reused), and (3) no reply has ever arrived on a reused connection to this
 * server. From that retry on, every request gets a connection of its own (`Connection: close`), so there is
 * no dying connection left to pick. A server that has answered on a reused connection keeps its
 * connections, so a close there is its own doing: recorded as E_RESET, never retried; so is any close on a
 * fresh connection, and any close after the reply began. Shared by both HTTP clients (h1-client.ts, undici).
 */
export class ReuseRule {
  /** A reply arrived on a reused connection: the server keeps its connections open. */
  keepsConnections = false;
  /** The server closes connections after each reply: every request now opens its own. */
  closesAfterReply = false;

  /** A response head arrived on a connection that had (reused) or had not carried a reply before. */
  repliedOnConnection(reused: boolean): void {
    if (reused) this.keepsConnections = true;
  }

  /** Applies the rule above to a failed attempt; when it says retry, later requests stop reusing connections. */
  shouldRetry(reused: boolean, err: unknown, replyStarted: boolean, retriesSoFar: number): boolean {
    const code = errorCode(err);
    const retry =
      retriesSoFar === 0 &&
      !replyStarted &&
      reused &&
      !this.keepsConnections &&
      code !== undefined &&
      CLOSED_BY_PEER.has(code);
    if (retry) this.closesAfterReply = true;
    return retry;
  }
}

/** The rule for undici: which connection an attempt went out on comes from its diagnostics channel. */
export class ConnectionReuse extends ReuseRule {
  private oneShot: Pool | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly makePool: () => Pool,
  ) {
    super();
  }

  /** Where the next attempt goes, and whether it asks for `Connection: close`. */
  route(): { dispatcher: Dispatcher; reset: boolean } {
    if (!this.closesAfterReply) return { dispatcher: this.pool, reset: false };
    // A pool of its own: the shared pool may still hold connections the server is closing.
    this.oneShot ??= this.makePool();
    return { dispatcher: this.oneShot, reset: true };
  }

  /** The response head arrived on this attempt's connection. */
  replied(attempt: WrittenOn): void {
    if (!attempt.socket) return;
    repliesOn.set(attempt.socket, (repliesOn.get(attempt.socket) ?? 0) + 1);
    this.repliedOnConnection(attempt.reused);
  }

  async close(): Promise<void> {
    await this.oneShot?.destroy();
  }
}
