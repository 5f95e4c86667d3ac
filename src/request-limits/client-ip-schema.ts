// The `clientIp:` settings (the config file's, and the adapters' option of the
// same name): which proxies are trusted, which header they write, how IPv6
// clients are grouped. Built, with zod, when first read (not by `import 'sluice'`).
import type { z as Zod } from 'zod';
import { lazily } from '../core/lazy.js';
import { loadPackage } from '../core/load-package.js';
import { parseCidr } from './client-ip.js';

function clientIpSchemaOf(z: typeof Zod) {
  return z
    .object({
      trustedProxies: z
        .array(z.string().refine((cidr) => parseCidr(cidr) !== undefined, 'must be an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or ::1/128'))
        .default([])
        .meta({ description: 'CIDRs of the proxies whose forwarding header is believed; from any other client the socket address counts' }),
      header: z
        .enum(['x-forwarded-for', 'forwarded'], 'must be x-forwarded-for or forwarded')
        .default('x-forwarded-for')
        .meta({ description: 'the header the trusted proxies write' }),
      ipv6Prefix: z
        .number()
        .int('must be an integer')
        .min(1, 'must be at least 1')
        .max(128, 'must be at most 128')
        .default(64)
        .meta({ description: 'IPv6 clients are counted by this prefix (one /64 is one client)' }),
    })
    .strict();
}

export const clientIpSchema = lazily(() => clientIpSchemaOf(loadPackage<{ z: typeof Zod }>('zod').z));

export const CLIENT_IP_DEFAULTS = { trustedProxies: [], header: 'x-forwarded-for' as const, ipv6Prefix: 64 };
