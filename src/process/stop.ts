// How a long-running Sluice process ends: SIGTERM or SIGINT (or `also`, e.g. the
// primary's drain message to a worker) starts the drain; a second signal stops
// at once. Resolves with the exit code.
import type { Logger } from 'pino';

export function untilStopped(logger: Logger, close: () => Promise<void>, also?: (stop: () => void) => void): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (reason: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal: reason }, 'shutting down');
      process.once('SIGTERM', () => process.exit(1)); // a second signal: stop now
      process.once('SIGINT', () => process.exit(1));
      close().then(
        () => resolve(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    also?.(() => stop('drain'));
  });
}
