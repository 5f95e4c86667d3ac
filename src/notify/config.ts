// A limit's `notify:` as loaded: the thresholds sorted, the secret read (from
// the file, the environment or the config itself) and wrapped so that no log
// or JSON dump of the config can print it. Each error names its field.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { NOTIFICATIONS_DEFAULTS, type NotifyEntry } from './schema.js';

/** A signing secret: `reveal()` to sign; printed, logged or serialized it is `[redacted]`. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toJSON(): string {
    return '[redacted]';
  }
  toString(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return '[redacted]';
  }
}

/** One limit's notifications, as the notifier takes them. */
export interface NotifyTarget {
  /** Ascending, distinct, each in (0, 1]. */
  readonly at: readonly number[];
  readonly url: string;
  readonly secret: Secret;
  readonly timeoutMs: number;
  readonly retryForMs: number;
}

export interface NotificationsConfig {
  /** limit id → its notify (limit ids are unique across routes and global limits). */
  readonly limits: Readonly<Record<string, NotifyTarget>>;
  readonly maxQueued: number;
  readonly concurrency: number;
  readonly drainMs: number;
}

export const NO_NOTIFICATIONS: NotificationsConfig = { limits: {}, ...NOTIFICATIONS_DEFAULTS };

type Path = (string | number)[];
export interface NotifyConfigContext {
  readonly fail: (path: Path, message: string) => never;
  readonly baseDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

interface LimitWithNotify {
  readonly id: string;
  readonly kind?: string | undefined;
  readonly notify?: NotifyEntry | undefined;
}

export interface NotifyFileInput {
  readonly routes: readonly { readonly limits?: readonly LimitWithNotify[] | undefined }[];
  readonly globalLimits: readonly LimitWithNotify[];
  readonly notifications?: { readonly maxQueued: number; readonly concurrency: number; readonly drainMs: number } | undefined;
}

/** Every limit's notify, by limit id, with the sender's options. */
export function notificationsOf(file: NotifyFileInput, ctx: NotifyConfigContext): NotificationsConfig {
  const limits: Record<string, NotifyTarget> = {};
  const add = (limit: LimitWithNotify, at: Path) => {
    if (limit.notify === undefined) return;
    if (limit.kind === 'concurrency') ctx.fail([...at, 'notify'], 'applies to rate limits only (a concurrency limit has no window to warn about)');
    limits[limit.id] = targetOf(limit.notify, [...at, 'notify'], ctx);
  };
  file.routes.forEach((route, i) => {
    route.limits?.forEach((limit, j) => {
      add(limit, ['routes', i, 'limits', j]);
    });
  });
  file.globalLimits.forEach((limit, j) => {
    add(limit, ['globalLimits', j]);
  });
  return { limits, ...(file.notifications ?? NOTIFICATIONS_DEFAULTS) };
}

const SECRET_FIELDS = ['secret', 'secretEnv', 'secretFile'] as const;

function targetOf(entry: NotifyEntry, at: Path, ctx: NotifyConfigContext): NotifyTarget {
  const at_ = [...new Set(entry.at)].sort((a, b) => a - b);
  if (at_.length < entry.at.length) ctx.fail([...at, 'at'], 'lists a threshold twice');
  return { at: at_, url: entry.url, secret: new Secret(secretOf(entry, at, ctx)), timeoutMs: entry.timeoutMs, retryForMs: entry.retryForMs };
}

function secretOf(entry: NotifyEntry, at: Path, ctx: NotifyConfigContext): string {
  const given = SECRET_FIELDS.filter((field) => entry[field] !== undefined);
  if (given.length === 0) return ctx.fail([...at, 'secret'], 'is required: give secret, secretEnv or secretFile (events are signed with it)');
  if (given.length > 1) ctx.fail([...at, given[1]!], `give one of ${SECRET_FIELDS.join(', ')}, not both ${given[0]} and ${given[1]}`);
  const field = given[0]!;
  const where = [...at, field];
  let text: string | undefined;
  if (field === 'secret') text = entry.secret;
  else if (field === 'secretEnv') {
    text = ctx.env[entry.secretEnv!];
    if (text === undefined || text === '') ctx.fail(where, `the environment variable ${entry.secretEnv} is not set`);
  } else text = readSecretFile(entry.secretFile!, where, ctx);
  const secret = (text ?? '').replace(/\r?\n$/, '');
  if (secret === '') ctx.fail(where, 'the secret is empty');
  return secret;
}

function readSecretFile(file: string, where: Path, ctx: NotifyConfigContext): string {
  try {
    return readFileSync(resolve(ctx.baseDir, file), 'utf8');
  } catch (error) {
    // The path and the reason, never the content.
    return ctx.fail(where, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
