// Bounded PostgreSQL work: a pool client is acquired and used under one timer.
// A frozen or unreachable server never holds a caller for longer than the timer;
// a client that timed out is in an unknown state (a query may still be queued
// on the server) and is destroyed, never handed back to the pool.
import type pg from 'pg';

/** The server did not answer in time; nothing about the outcome is known from the reply. */
export class StoreTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/** Resolves when `work` settles or after `ms`, whichever comes first. */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work.then(() => {}, () => {}), elapsed]);
  clearTimeout(timer);
}

/** Rejects with StoreTimeoutError once `timeoutMs` have passed; `cancel` stops it. */
function expiry(timeoutMs: number): { expired: Promise<never>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  // Measured on the wall clock: a timer armed from a stale event-loop time can
  // fire early, and a write's guarantee needs "never before", not "about".
  const until = Date.now() + timeoutMs;
  const expired = new Promise<never>((_, reject) => {
    const check = (): void => {
      const left = until - Date.now();
      timer = left > 0 ? setTimeout(check, left) : undefined;
      if (left <= 0) reject(new StoreTimeoutError(timeoutMs));
    };
    timer = setTimeout(check, timeoutMs);
  });
  return { expired, cancel: () => clearTimeout(timer) };
}

export async function withTimedClient<T>(pool: pg.Pool, timeoutMs: number, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const { expired, cancel } = expiry(timeoutMs);
  const acquiring = pool.connect();
  let client: pg.PoolClient;
  try {
    client = await Promise.race([acquiring, expired]);
  } catch (error) {
    cancel();
    // A connection that arrives after we gave up goes straight back to the pool.
    acquiring.then((late) => late.release(), () => {});
    throw error;
  }
  // A connection that dies while checked out emits 'error'; unheard, that would crash the process.
  // The failure reaches us through the query anyway.
  const ignore = (): void => {};
  client.on('error', ignore);
  const running = work(client);
  try {
    const result = await Promise.race([running, expired]);
    client.removeListener('error', ignore);
    client.release();
    return result;
  } catch (error) {
    running.catch(() => {});
    // Destroying (not reusing) the client: its queued statements die with it. Still listening: it may yet emit.
    client.release(error instanceof Error ? error : true);
    throw error;
  } finally {
    cancel();
  }
}

/**
 * `sql` in its own transaction, which the server refuses to commit once its
 * clock passes `deadline` (the deferred trigger of migrations/003 checks it
 * inside COMMIT, after every statement). So a statement or COMMIT that a
 * frozen server runs only after it resumes is rolled back, not applied late.
 * The caller answers "failed" no earlier than deadline + maxClockSkewMs: as
 * long as the server's clock lags ours by at most that, a write reported as
 * failed cannot commit after the report, so it never lands after a later,
 * acknowledged write. Not covered: a freeze in the microseconds between that
 * check and the commit record, and a commit whose reply is lost (it committed
 * before the report; reading the value back tells).
 */
export async function writeBeforeDeadline<R extends pg.QueryResultRow, T>(
  client: pg.PoolClient,
  deadline: Date,
  sql: string,
  params: unknown[],
  /** Runs after the statement, in its transaction (the audit entry of the change goes in here). */
  then: (result: pg.QueryResult<R>) => Promise<T>,
): Promise<T> {
  // An ISO timestamp we made ourselves: safe to inline, and one round trip with BEGIN.
  await client.query(`BEGIN; SET LOCAL sluice.write_deadline = '${deadline.toISOString()}'`);
  try {
    const result = await then(await client.query<R>(sql, params));
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
