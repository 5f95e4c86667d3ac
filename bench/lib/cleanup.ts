// Every server a bench starts registers its stop function here, so a bench
// that fails or is interrupted (SIGINT, SIGTERM) leaves nothing running.
type Stop = () => Promise<void> | void;

const stops = new Set<Stop>();
let installed = false;

/** Registers `stop`; returns a function that stops it now and forgets it. */
export function onCleanup(stop: Stop): () => Promise<void> {
  install();
  stops.add(stop);
  return async () => {
    if (!stops.delete(stop)) return;
    await stop();
  };
}

/** Runs every registered stop, newest first; never throws. */
export async function cleanupAll(): Promise<void> {
  const pending = [...stops].reverse();
  stops.clear();
  for (const stop of pending) {
    try {
      await stop();
    } catch {
      // best effort: the next stop must still run
    }
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping servers\n`);
      void cleanupAll().finally(() => process.exit(130));
    });
  }
}

/** Runs a bench's main function, cleaning up on success and on error. */
export async function runMain(main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (error) {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  } finally {
    await cleanupAll();
  }
}

/** Whether the module at `url` is the script node was asked to run. */
export function isMain(url: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  const path = new URL(url).pathname;
  return path === script || path.replace(/\.ts$/, '') === script.replace(/\.ts$/, '');
}
