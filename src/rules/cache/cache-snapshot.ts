// The rule cache's snapshot file: read once when the store is unreachable at
// start, then kept in step with every new set (one write at a time, each taking
// the latest set, so a burst of changes costs few writes).
import { SluiceError } from '../../core/errors.js';
import { errorMessage, type RulesLogger } from '../logger.js';
import { buildPlanSet } from '../plan-set.js';
import type { PlanSubject } from '../plans.js';
import { buildRuleSet, type RuleSet } from '../rule-set.js';
import { readSnapshot, writeSnapshot } from './snapshot-file.js';

/** The set saved at `path`, or a clear error naming why the store failed (`cause`) when there is none. */
export function setFromSnapshot(path: string | undefined, cause: unknown): { set: RuleSet; savedAt: string } {
  const snapshot = path ? readSnapshot(path) : undefined;
  if (!snapshot) {
    throw new SluiceError(
      'ERR_STORE_UNAVAILABLE',
      `cannot load rules: ${errorMessage(cause)}; and no rules snapshot ${path ? `at ${path}` : 'is configured'} to start from. Start the rule store (or fix SLUICE_DATABASE_URL) and retry.`,
    );
  }
  return { set: buildRuleSet(snapshot.rules, snapshot.keys, { overrides: snapshot.overrides ?? [], plans: buildPlanSet(snapshot.plans ?? [], snapshot.assignments ?? []), lists: snapshot.lists ?? [] }), savedAt: snapshot.savedAt };
}

export class SnapshotWriter {
  private writing: Promise<void> = Promise.resolve();
  private dirty = false;

  constructor(
    private readonly path: string,
    /** Where the rules came from (the store's location), recorded in the file. */
    private readonly source: string,
    private readonly latest: () => RuleSet,
    private readonly logger: RulesLogger,
  ) {}

  save(): void {
    if (this.dirty) return;
    this.dirty = true;
    this.writing = this.writing.then(async () => {
      this.dirty = false;
      const set = this.latest();
      try {
        await writeSnapshot(this.path, {
          format: 1,
          savedAt: new Date().toISOString(),
          source: this.source,
          rules: [...set.stored.values()],
          keys: [...set.keys].map(([hash, entry]) => ({ id: entry.id, tenant: entry.tenant, hash })),
          overrides: [...set.overrides.stored.values()],
          plans: [...set.plans.stored.values()],
          assignments: [...set.plans.assignments].map(([key, plan]) => {
            const [subject, id] = key.split('\u0000') as [PlanSubject, string];
            // The cache keeps no assignment's time; a snapshot only serves.
            return { subject, id, plan, updatedAt: '' };
          }),
          lists: [...set.lists.entries.values()],
        });
      } catch (error) {
        this.logger.warn({ err: errorMessage(error), snapshot: this.path }, 'could not write the rules snapshot');
      }
    });
  }

  /** Resolves once every write asked for so far is done. */
  settled(): Promise<void> {
    return this.writing;
  }
}
