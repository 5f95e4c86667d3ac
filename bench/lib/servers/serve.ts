// The child side of children.ts: start a server, report its URL over IPC,
// close it on SIGTERM or when the parent goes away.
export interface Served {
  url: string;
  close(): Promise<void>;
}

export function args<T>(): T {
  return JSON.parse(process.argv[2] ?? '{}') as T;
}

export async function serve(start: () => Promise<Served>): Promise<void> {
  try {
    const server = await start();
    const stop = () => {
      void server.close().finally(() => process.exit(0));
      setTimeout(() => process.exit(0), 2000).unref();
    };
    process.once('SIGTERM', stop);
    process.once('disconnect', stop);
    process.send?.({ url: server.url });
  } catch (error) {
    process.send?.({ error: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }
}
