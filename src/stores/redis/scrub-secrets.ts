// ioredis puts the failed command on its errors (`err.command.args`): for a
// refused AUTH or HELLO that is the password, which any logger serializing the
// error would print. Sluice's clients scrub it on the first error listener,
// before anything else sees the error (command promises settle later, in
// microtasks), so no log line, /readyz body or error message can carry it.
import { isCluster, type RedisClient } from './client.js';

const WITH_SECRETS = new Set(['auth', 'hello']);
export const REDACTED = '[redacted]';

interface CommandError {
  command?: { name?: string; args?: unknown[] };
  previousErrors?: unknown[];
  lastNodeError?: unknown;
}

/** Blanks the arguments of AUTH and HELLO on `error` and the errors it carries. */
export function scrubSecrets(error: unknown, seen = new Set<unknown>()): void {
  if (error === null || typeof error !== 'object' || seen.has(error)) return;
  seen.add(error);
  const { command, previousErrors, lastNodeError } = error as CommandError;
  if (command?.name && WITH_SECRETS.has(command.name.toLowerCase()) && Array.isArray(command.args)) command.args = [REDACTED];
  for (const previous of previousErrors ?? []) scrubSecrets(previous, seen);
  scrubSecrets(lastNodeError, seen);
}

/** Call right after creating the client, so this listener runs first. */
export function scrubErrorsOf(client: RedisClient): void {
  client.on('error', (error: unknown) => scrubSecrets(error));
  if (isCluster(client)) client.on('node error', (error: unknown) => scrubSecrets(error));
}
