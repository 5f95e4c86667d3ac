// The connection fields of `store` and `database`: TLS files, credentials and
// Sentinel. Files are named here and read by connection-files.ts, so a
// missing or unreadable one is an error naming its field.
import { z } from 'zod';

export const hostPort = z.string().regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, 'must be host:port');
const filePath = z.string().min(1, 'must be a file path');
const nonEmpty = z.string().min(1, 'must not be empty');

/** PEM files for a TLS connection; `{}` turns TLS on with the system's CAs. */
export const tlsFilesSchema = z
  .object({
    /** CA bundle that signs the server's certificate (a private CA). */
    ca: filePath.optional(),
    /** Client certificate and its key, for servers that ask for one (mutual TLS). */
    cert: filePath.optional(),
    key: filePath.optional(),
    /** Name checked against the server's certificate (SNI), when it is not the host connected to. */
    servername: nonEmpty.optional(),
    /** false accepts any certificate: encrypted but not authenticated. */
    rejectUnauthorized: z.boolean().optional(),
  })
  .strict();

/** An ACL user and its password, given inline or (better) in a file read at start and on reload. */
export const credentialFields = {
  username: nonEmpty.optional(),
  password: nonEmpty.optional(),
  passwordFile: filePath.optional(),
};

export const sentinelSchema = z
  .object({
    /** The master's name as the sentinels know it (`sentinel monitor NAME …`). */
    name: nonEmpty,
    sentinels: z.array(hostPort).min(1, 'must list at least one sentinel'),
    /** The sentinels' own credentials and TLS; the data nodes' are store.username/password/tls. */
    ...credentialFields,
    tls: tlsFilesSchema.optional(),
  })
  .strict();

/** The Redis store's connection fields, spread into the `store` section. */
export const storeConnectionFields = {
  ...credentialFields,
  tls: tlsFilesSchema.optional(),
  sentinel: sentinelSchema.optional(),
};

/** libpq's sslmode, the three that mean something: no TLS, TLS without checking the server, TLS with its certificate and name checked. */
export const DATABASE_TLS_MODES = ['disable', 'require', 'verify-full'] as const;

export const databaseConnectionFields = {
  tls: z
    .object({
      mode: z.enum(DATABASE_TLS_MODES, `must be one of ${DATABASE_TLS_MODES.join(', ')}`),
      /** The CA that signs the server's certificate (verify-full); without it, the system's CAs. */
      ca: filePath.optional(),
    })
    .strict()
    .optional(),
  /** The password of database.url's user, read from this file at start and on reload. */
  passwordFile: filePath.optional(),
};
