// The PostgreSQL store's first start: the config's rules (parsed when the
// config was loaded) written once, against an empty store; afterwards the
// admin API owns them. The claim in sluice_meta makes two instances starting
// together seed once.
import type pg from 'pg';
import type { RulesLogger } from '../logger.js';
import { RULE_WRITE_COLUMNS, seededMessage, seedValues } from '../rule-rows.js';
import type { SeedRule } from '../store.js';

export async function seedOnce(client: pg.PoolClient, seeds: readonly SeedRule[], logger: RulesLogger, location: string): Promise<void> {
  await client.query('BEGIN');
  try {
    const claimed = await client.query("INSERT INTO sluice_meta (key, value) VALUES ('seeded', now()::text) ON CONFLICT DO NOTHING");
    for (const values of claimed.rowCount === 1 ? seedValues(seeds) : []) {
      await client.query(`INSERT INTO rate_limit_rule (${RULE_WRITE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant_id, route_id) DO NOTHING`, values);
    }
    await client.query('COMMIT');
    if (claimed.rowCount === 1) seededMessage(logger, seeds.length, location);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
