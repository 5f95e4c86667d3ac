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

/** A connection failure with what to check: the refused password, the missing TLS, the certificate. */
export function describePgConnectError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const text = error.message;
  if (code === '28P01') return `authentication refused (28P01): ${text}; check database.url's user and database.passwordFile`;
  if (code === '28000' && text.includes('no encryption')) return `${text}: the server wants TLS; set database.tls.mode (require or verify-full)`;
  if (text.includes('does not support SSL')) return `${text}: set database.tls.mode disable, or turn ssl on in PostgreSQL`;
  if (/CERT|SSL|TLS|UNABLE_TO_|SELF_SIGNED/.test(code)) return `TLS handshake failed (${code}): ${text}; check database.tls (mode, ca)`;
  return text;
}
