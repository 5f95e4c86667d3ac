// What each config option says about itself, next to its zod schema: its
// description, the SLUICE_* variable that sets it, whether a reload applies it
// and, where the schema holds no default (one load.ts fills), the default in
// words. The reference pages (docs/configuration-reference.md and
// docs/environment-variables.md) are generated from these by
// scripts/gen-config-docs.ts, so an option is defined once.
import type { z } from 'zod';

export interface OptionMeta {
  /** One line or a few, Markdown; links are written relative to docs/. */
  description?: string;
  /** The SLUICE_* variable that overrides this field. */
  env?: string;
  /** What the variable does besides setting the field (e.g. "switches the store to Redis"). */
  envNote?: string;
  /** false: a reload leaves the running value alone until a restart (inherited by the fields inside). */
  reload?: boolean;
  /** The default when the schema has none (load.ts fills it, or it depends on other fields). */
  defaultText?: string;
  /** The type when the schema cannot say it (a rule, checked by parseRule). */
  typeText?: string;
}

declare module 'zod' {
  interface GlobalMeta extends OptionMeta {}
}

/**
 * `schema` (an object) with `meta` added to some of its fields: a shared shape
 * (TLS files, credentials) whose fields take a different SLUICE_* name where
 * it is used.
 */
export function withFieldMeta<Shape extends z.ZodRawShape>(schema: z.ZodObject<Shape>, meta: { [K in keyof Shape]?: OptionMeta }): z.ZodObject<Shape> {
  const extra: Record<string, z.ZodType> = {};
  for (const [field, fieldMeta] of Object.entries(meta)) {
    const current = schema.shape[field] as z.ZodType | undefined;
    if (current && fieldMeta) extra[field] = current.meta(fieldMeta as z.GlobalMeta);
  }
  return schema.extend(extra) as unknown as z.ZodObject<Shape>;
}
