// How a PostgreSQL connection is made from database.url plus database.tls and
// database.passwordFile. pg lets a connection string override the separate
// fields (a URL without a password would blank one given beside it), so the
// password goes into the URL; TLS goes beside it, the URL having no sslmode
// (the config refuses both).
import type { ConnectionOptions } from 'node:tls';

export interface PgConnection {
  /** Replaces the URL's password (database.passwordFile). */
  password?: string | undefined;
  /** libpq's sslmode and the CA's PEM text for verify-full; absent = as the URL says. */
  tls?: { mode: 'disable' | 'require' | 'verify-full'; ca?: string | undefined } | undefined;
}

export interface PgClientConfig {
  connectionString: string;
  ssl?: false | ConnectionOptions;
}

export function pgClientConfig(connectionString: string, connection: PgConnection = {}): PgClientConfig {
  const config: PgClientConfig = { connectionString: withPassword(connectionString, connection.password) };
  const tls = connection.tls;
  if (tls) config.ssl = sslOf(tls);
  return config;
}

function sslOf(tls: NonNullable<PgConnection['tls']>): false | ConnectionOptions {
  if (tls.mode === 'disable') return false;
  // require: encrypted, any certificate (libpq's meaning, not pg's verify-everything alias).
  if (tls.mode === 'require') return { rejectUnauthorized: false };
  // verify-full: the chain up to the CA, and the host name (node's checkServerIdentity).
  return { rejectUnauthorized: true, ...(tls.ca !== undefined ? { ca: tls.ca } : {}) };
}

function withPassword(connectionString: string, password: string | undefined): string {
  if (password === undefined) return connectionString;
  const url = new URL(connectionString);
  url.password = encodeURIComponent(password);
  return url.toString();
}
