// The YAML format of envoyproxy/ratelimit, read as it is (one domain per file)
// with every field the reference reads, plus Sluice's `sluice:` extension on a
// descriptor: a rule (any of the six policies) or a list of rules replacing
// the reference's fixed window. The checks whose messages are the reference's
// own (empty key, bad unit, replaces…) are in envoy-limit.ts and envoy-config.ts.
import { z } from 'zod';
import type { UnitName } from '../config/decision-service.js';
import { MAX_COUNT } from '../policies/rule.js';

/** The reference's units, in seconds (its week is 7 days, its month 30, its year 365). */
export const UNIT_SECONDS = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 7 * 86_400,
  month: 30 * 86_400,
  year: 365 * 86_400,
} as const satisfies Record<UnitName, number>;
export type { UnitName } from '../config/decision-service.js';
export const UNIT_NAMES = Object.keys(UNIT_SECONDS) as UnitName[];

/** A YAML scalar the reference reads into a Go string (`value: 5` is "5"). */
const text = z.union([z.string(), z.number(), z.boolean()]).transform(String);

const rateLimitSchema = z
  .object({
    unit: text.nullish(),
    requests_per_unit: z.number().int('must be an integer').min(0, 'must be at least 0').max(MAX_COUNT, `must be at most ${MAX_COUNT} (Sluice's largest limit)`).nullish(),
    name: text.nullish(),
    unlimited: z.boolean().nullish(),
    replaces: z.array(z.object({ name: text.nullish() }).strict()).nullish(),
  })
  .strict();

export type RateLimitFile = z.infer<typeof rateLimitSchema>;

export interface DescriptorFile {
  key?: string | null | undefined;
  value?: string | null | undefined;
  rate_limit?: RateLimitFile | null | undefined;
  shadow_mode?: boolean | null | undefined;
  quota_mode?: boolean | null | undefined;
  detailed_metric?: boolean | null | undefined;
  value_to_metric?: boolean | null | undefined;
  share_threshold?: boolean | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  sluice?: unknown;
  descriptors?: DescriptorFile[] | null | undefined;
}

const descriptorSchema: z.ZodType<DescriptorFile> = z.lazy(() =>
  z
    .object({
      key: text.nullish(),
      value: text.nullish(),
      rate_limit: rateLimitSchema.nullish(),
      shadow_mode: z.boolean().nullish(),
      quota_mode: z.boolean().nullish(),
      detailed_metric: z.boolean().nullish(),
      value_to_metric: z.boolean().nullish(),
      share_threshold: z.boolean().nullish(),
      metadata: z.record(z.string(), z.unknown()).nullish(),
      sluice: z.unknown().optional(),
      descriptors: z.array(descriptorSchema).nullish(),
    })
    .strict(),
);

export const envoyFileSchema = z
  .object({
    domain: text.nullish(),
    descriptors: z.array(descriptorSchema).nullish(),
  })
  .strict();

export type EnvoyFile = z.infer<typeof envoyFileSchema>;
