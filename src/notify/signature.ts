// The webhook's signature, as Stripe and GitHub sign theirs: an HMAC-SHA256,
// keyed by the limit's secret, over the timestamp, a dot and the raw body.
// The timestamp is signed so a receiver can refuse a replayed old event.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Sluice-Signature';

/** `t=<unix seconds>,v1=<hex>`: the header's value for `body` sent at `unixSeconds`. */
export function signatureHeader(secret: string, unixSeconds: number, body: string): string {
  return `t=${unixSeconds},v1=${hmacHex(secret, unixSeconds, body)}`;
}

function hmacHex(secret: string, unixSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
}

/**
 * What a receiver checks (docs/notifications.md shows the same in a few
 * lines): the header parses, the timestamp is within `toleranceSeconds` of
 * `nowSeconds`, and one v1 signature matches, compared in constant time.
 */
export function verifySignature(secret: string, header: string, body: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = header.split(',').map((part) => part.split('='));
  const t = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, t, body), 'hex');
  return parts.some(([key, value]) => {
    if (key !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
