// The config file's shape for notifications: a limit's `notify:` (thresholds,
// the receiver's URL, the signing secret and how long to keep trying) and the
// top-level `notifications:` (the sender's queue, workers and drain). Secrets
// are read and checked in config.ts, each error naming its field.
import { z } from 'zod';

/** How long a delivery is retried by default: an hour outlasts a receiver's deploy or restart, not a day's outage. */
export const DEFAULT_RETRY_FOR_MS = 3_600_000;
export const DEFAULT_NOTIFY_TIMEOUT_MS = 5_000;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const notifySchema = z
  .object({
    at: z
      .array(z.number('must be a number').gt(0, 'must be above 0').max(1, 'must be at most 1 (1.0: the limit is exhausted or a request refused)'))
      .min(1, 'must list at least one threshold, e.g. [0.8, 1.0]')
      .max(10, 'must list at most 10 thresholds')
      .meta({ description: 'the fractions of the limit consumed that send an event, each in (0, 1]: `0.8` when 80 % is used, `1.0` when it is exhausted or a request refused ([notifications.md](notifications.md))' }),
    url: z
      .string()
      .regex(/^https?:\/\/[^\s/?#]+\S*$/, 'must be an http:// or https:// URL')
      .refine((url) => URL.canParse(url), 'must be an http:// or https:// URL')
      .meta({ description: 'where events are POSTed (JSON, signed)' }),
    secret: z.string().min(1, 'must not be empty').optional().meta({ description: 'the signing secret itself (a variable expanded from the environment, secretEnv or secretFile to keep it out of the file); one of secret, secretEnv, secretFile is required' }),
    secretEnv: z.string().regex(ENV_NAME, 'must be an environment variable name').optional().meta({ description: 'the environment variable holding the signing secret' }),
    secretFile: z.string().min(1, 'must not be empty').optional().meta({ description: 'a file holding the signing secret (a trailing newline is dropped)' }),
    timeoutMs: z.number().int('must be an integer').min(100, 'must be at least 100').max(60_000, 'must be at most 60000').default(DEFAULT_NOTIFY_TIMEOUT_MS).meta({ description: 'how long one POST may take before it counts as failed and is retried' }),
    retryForMs: z
      .number()
      .int('must be an integer')
      .min(0, 'must be at least 0')
      .max(86_400_000, 'must be at most 86400000 (a day)')
      .default(DEFAULT_RETRY_FOR_MS)
      .meta({ description: 'how long a failed delivery is retried, with exponential backoff and jitter, before it counts as failed; 0: one attempt' }),
  })
  .strict();

export type NotifyEntry = z.infer<typeof notifySchema>;

export const NOTIFICATIONS_DEFAULTS = { maxQueued: 10_000, concurrency: 4, drainMs: 5_000 } as const;

export const notificationsSchema = z
  .object({
    maxQueued: z.number().int('must be an integer').min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000').default(NOTIFICATIONS_DEFAULTS.maxQueued).meta({
      description: 'events waiting to be sent or retried, at most; past it an event is dropped and counted (`sluice_notifications_total{outcome="dropped"}`)',
    }),
    concurrency: z.number().int('must be an integer').min(1, 'must be at least 1').max(64, 'must be at most 64').default(NOTIFICATIONS_DEFAULTS.concurrency).meta({ description: 'POSTs in flight at once' }),
    drainMs: z.number().int('must be an integer').min(0, 'must be at least 0').max(60_000, 'must be at most 60000').default(NOTIFICATIONS_DEFAULTS.drainMs).meta({
      description: 'on shutdown, how long queued events may still be sent; what is left is counted as dropped',
    }),
  })
  .strict();
