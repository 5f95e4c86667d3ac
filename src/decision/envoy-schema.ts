// The YAML format of envoyproxy/ratelimit, read as it is (one domain per file),
// plus Sluice's `sluice:` extension on a descriptor: a rule (any of the six
// policies) or a list of rules replacing the reference's fixed window.
import { z } from 'zod';

/** The reference's units, in seconds (its month is 30 days, its year 365). */
export const UNIT_SECONDS = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
  month: 30 * 86_400,
  year: 365 * 86_400,
} as const;
export type UnitName = keyof typeof UNIT_SECONDS;
export const UNIT_NAMES = Object.keys(UNIT_SECONDS) as UnitName[];

const unitSchema = z
  .string()
  .transform((text) => text.toLowerCase())
  .refine((text): text is UnitName => text in UNIT_SECONDS, `must be one of ${UNIT_NAMES.join(', ')}`);

const rateLimitSchema = z
  .object({
    unit: unitSchema.optional(),
    requests_per_unit: z.number().int('must be an integer').min(1, 'must be at least 1 (Sluice cannot hold a limit of 0)').max(1_000_000_000, 'must be at most 1000000000').optional(),
    name: z.string().min(1).optional(),
    unlimited: z.boolean().optional(),
  })
  .strict();

export interface DescriptorFile {
  key: string;
  value?: string | undefined;
  rate_limit?: z.infer<typeof rateLimitSchema> | undefined;
  shadow_mode?: boolean | undefined;
  detailed_metric?: boolean | undefined;
  replaces?: { name: string }[] | undefined;
  sluice?: unknown;
  descriptors?: DescriptorFile[] | undefined;
}

const descriptorSchema: z.ZodType<DescriptorFile> = z.lazy(() =>
  z
    .object({
      key: z.string().min(1, 'must not be empty'),
      value: z.union([z.string(), z.number()]).transform(String).optional(),
      rate_limit: rateLimitSchema.optional(),
      shadow_mode: z.boolean().optional(),
      detailed_metric: z.boolean().optional(),
      replaces: z.array(z.object({ name: z.string().min(1, 'must not be empty') }).strict()).optional(),
      sluice: z.unknown().optional(),
      descriptors: z.array(descriptorSchema).optional(),
    })
    .strict(),
);

export const envoyFileSchema = z
  .object({
    domain: z.string().min(1, 'must not be empty'),
    descriptors: z.array(descriptorSchema).default([]),
  })
  .strict();

export type EnvoyFile = z.infer<typeof envoyFileSchema>;
