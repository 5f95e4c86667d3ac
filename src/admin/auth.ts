// Bearer-token check for the admin API. Both sides are hashed first, so the
// comparison is constant-time whatever the lengths, and the token is never logged.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { SluiceError } from '../core/errors.js';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Returns a check that throws 401 (or 403 when no token is configured) for a request it refuses. */
export function bearerAuth(token: string | undefined): (req: IncomingMessage) => void {
  const expected = token ? digest(token) : undefined;
  return (req) => {
    if (!expected) {
      throw new SluiceError('ERR_ADMIN_DISABLED', 'the admin API is disabled: SLUICE_ADMIN_TOKEN is not set; set it to a long random secret and restart');
    }
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match) throw new SluiceError('ERR_UNAUTHORIZED', 'missing bearer token: send Authorization: Bearer <SLUICE_ADMIN_TOKEN>', 'authorization');
    if (!timingSafeEqual(digest(match[1]!.trim()), expected)) throw new SluiceError('ERR_UNAUTHORIZED', 'wrong token', 'authorization');
  };
}
