// Bearer tokens for the admin API. SLUICE_ADMIN_TOKEN is the `admin` token
// named `bootstrap`; the others are the rule store's named tokens (rules/admin/tokens-and-audit.ts),
// looked up by their SHA-256. Every comparison is of two digests in constant
// time, and no token is ever logged. A stored token's answer is kept for at
// most `cacheMs` (500 ms): a token revoked on any instance sharing the store is
// refused by every instance within a second, without a notification channel.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { SluiceError } from '../core/errors.js';
import { BOOTSTRAP_NAME, type Role, roleAllows, type TeamStore } from '../rules/admin/tokens-and-audit.js';

export interface Principal {
  name: string;
  role: Role;
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
/** Only valid tokens are remembered, so this bounds the cache; a guard against a huge token table all the same. */
const MAX_CACHED = 1000;

export class TokenAuth {
  private readonly bootstrap: Buffer | undefined;
  private readonly known = new Map<string, { principal: Principal; until: number }>();

  constructor(
    token: string | undefined,
    private readonly tokens: Pick<TeamStore, 'tokenByHash'> | undefined,
    private readonly cacheMs = 500,
  ) {
    this.bootstrap = token ? digest(token) : undefined;
  }

  /** The token's holder; throws 401 for a missing or unknown token, 403 when the admin API is off. */
  async authorize(req: IncomingMessage): Promise<Principal> {
    if (!this.bootstrap) {
      throw new SluiceError('ERR_ADMIN_DISABLED', 'the admin API is disabled: SLUICE_ADMIN_TOKEN is not set; set it to a long random secret and restart');
    }
    const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (!match) throw new SluiceError('ERR_UNAUTHORIZED', 'missing bearer token: send Authorization: Bearer <token>', 'authorization');
    const presented = digest(match[1]!.trim());
    if (timingSafeEqual(presented, this.bootstrap)) return { name: BOOTSTRAP_NAME, role: 'admin' };
    const principal = await this.stored(presented);
    if (!principal) throw new SluiceError('ERR_UNAUTHORIZED', 'wrong token', 'authorization');
    return principal;
  }

  /** After a revocation here: this instance refuses the token at once, not after the cache's time. */
  forget(): void {
    this.known.clear();
  }

  private async stored(presented: Buffer): Promise<Principal | undefined> {
    if (!this.tokens) return undefined;
    const key = presented.toString('hex');
    const cached = this.known.get(key);
    if (cached && cached.until > Date.now()) return cached.principal;
    this.known.delete(key);
    const row = await this.tokens.tokenByHash(presented);
    if (!row || !timingSafeEqual(row.hash, presented)) return undefined;
    const principal = { name: row.name, role: row.role };
    if (this.known.size >= MAX_CACHED) this.known.clear();
    this.known.set(key, { principal, until: Date.now() + this.cacheMs });
    return principal;
  }
}

/**
 * The role an endpoint needs: tokens and reloads `admin`; any other method
 * than GET or HEAD `write`; reads `read`. Decided by method, not by a list of
 * endpoints, so a new write endpoint can never be left open to `read`.
 */
export function requiredRole(method: string, parts: readonly string[]): Role {
  if (parts[0] === 'tokens' || parts[0] === 'reload') return 'admin';
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

export function assertAllowed(principal: Principal, needed: Role): void {
  if (!roleAllows(principal.role, needed)) {
    throw new SluiceError('ERR_FORBIDDEN', `token ${principal.name} has role ${principal.role}; this endpoint needs ${needed}`, 'authorization');
  }
}
