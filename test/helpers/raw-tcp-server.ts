import { createServer, type Server, type Socket } from 'node:net';

/**
 * A bare TCP server on 127.0.0.1 for servers that misbehave below HTTP: `onSocket` decides what each connection
 * gets (nothing, for a hung server; a close on the first bytes, for one that accepts and hangs up). `close`
 * destroys every socket still open.
 */
export async function rawTcpServer(onSocket: (s: Socket) => void = () => undefined): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const srv: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    onSocket(s);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => srv.close(() => r()));
    },
  };
}
