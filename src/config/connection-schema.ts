// The connection fields of `store` and `database`: TLS files, credentials and
// Sentinel. Files are named here and read by connection-files.ts, so a
// missing or unreadable one is an error naming its field.
import { z } from 'zod';
import { withFieldMeta } from './option-meta.js';

export const hostPort = z.string().regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, 'must be host:port');
const filePath = z.string().min(1, 'must be a file path');
const nonEmpty = z.string().min(1, 'must not be empty');

/** PEM files for a TLS connection; `{}` turns TLS on with the system's CAs. */
export const tlsFilesSchema = z
  .object({
    /** CA bundle that signs the server's certificate (a private CA). */
    ca: filePath.optional().meta({ description: "PEM file of the CA that signed the server's certificate (a private CA)", defaultText: "the system's CAs" }),
    /** Client certificate and its key, for servers that ask for one (mutual TLS). */
    cert: filePath.optional().meta({ description: 'PEM client certificate, for a server with `tls-auth-clients yes` (with `key`)' }),
    key: filePath.optional().meta({ description: 'its PEM key' }),
    /** Name checked against the server's certificate (SNI), when it is not the host connected to. */
    servername: nonEmpty.optional().meta({ description: "the name checked against the server's certificate (SNI)", defaultText: 'the host connected to' }),
    /** false accepts any certificate: encrypted but not authenticated. */
    rejectUnauthorized: z.boolean().optional().meta({ description: '`false` accepts any certificate: encrypted but not authenticated', defaultText: '`true`' }),
  })
  .strict();

/** An ACL user and its password, given inline or (better) in a file read at start and on reload. */
export const credentialFields = {
  username: nonEmpty.optional().meta({ description: 'the ACL user Sluice connects as ([redis.md](redis.md#acl-user))', defaultText: '`default`' }),
  password: nonEmpty.optional().meta({ description: 'its password; prefer `passwordFile` (not both)' }),
  passwordFile: filePath.optional().meta({ description: 'a file holding the password (one line; a trailing newline is dropped), read at start and at each reload' }),
};

export const sentinelSchema = z
  .object({
    /** The master's name as the sentinels know it (`sentinel monitor NAME …`). */
    name: nonEmpty.meta({ description: "the master's name as the sentinels know it", env: 'SLUICE_REDIS_SENTINEL_NAME' }),
    sentinels: z.array(hostPort).min(1, 'must list at least one sentinel').meta({
      description: '`host:port` of each sentinel',
      env: 'SLUICE_REDIS_SENTINELS',
      envNote: "comma-separated; switches the store to Redis Sentinel (the file's `store.url` and `store.cluster` are dropped)",
    }),
    /** The sentinels' own credentials and TLS; the data nodes' are store.username/password/tls. */
    ...credentialFields,
    tls: tlsFilesSchema.optional().meta({ description: "TLS to the sentinels (the same fields as `store.tls`)" }),
  })
  .strict();

/** The Redis store's connection fields, spread into the `store` section. */
export const storeConnectionFields = {
  username: credentialFields.username.meta({ env: 'SLUICE_REDIS_USERNAME' }),
  password: credentialFields.password.meta({ env: 'SLUICE_REDIS_PASSWORD' }),
  passwordFile: credentialFields.passwordFile.meta({ env: 'SLUICE_REDIS_PASSWORD_FILE' }),
  tls: withFieldMeta(tlsFilesSchema, {
    ca: { env: 'SLUICE_REDIS_TLS_CA', envNote: 'turns TLS on' },
    cert: { env: 'SLUICE_REDIS_TLS_CERT' },
    key: { env: 'SLUICE_REDIS_TLS_KEY' },
    servername: { env: 'SLUICE_REDIS_TLS_SERVERNAME' },
  })
    .optional()
    .meta({ description: 'TLS to Redis; `{}` = TLS with the system\'s CAs', defaultText: 'plain; TLS with a `rediss://` URL' }),
  sentinel: sentinelSchema.optional().meta({ description: 'Redis Sentinel (give one of `url`, `cluster`, `sentinel`)' }),
};

/** libpq's sslmode, the three that mean something: no TLS, TLS without checking the server, TLS with its certificate and name checked. */
export const DATABASE_TLS_MODES = ['disable', 'require', 'verify-full'] as const;

export const databaseConnectionFields = {
  tls: z
    .object({
      mode: z.enum(DATABASE_TLS_MODES, `must be one of ${DATABASE_TLS_MODES.join(', ')}`).meta({
        description: "libpq's `sslmode`: `disable` (no TLS), `require` (TLS, any certificate), `verify-full` (TLS, the certificate checked against the CA and the host name)",
        env: 'SLUICE_DATABASE_TLS_MODE',
      }),
      /** The CA that signs the server's certificate (verify-full); without it, the system's CAs. */
      ca: filePath.optional().meta({ description: "`verify-full` only: PEM file of the CA that signed the server's certificate", defaultText: "the system's CAs", env: 'SLUICE_DATABASE_TLS_CA' }),
    })
    .strict()
    .optional()
    .meta({ description: 'TLS to PostgreSQL (not with an `sslmode` in `database.url`)', defaultText: 'as `database.url` says' }),
  /** The password of database.url's user, read from this file at start and on reload. */
  passwordFile: filePath.optional().meta({ description: "a file holding the password of `database.url`'s user (replaces one in the URL), read at start and at each reload", env: 'SLUICE_DATABASE_PASSWORD_FILE' }),
};
