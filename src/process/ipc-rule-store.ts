// A worker's rule store: reads go to the primary, which owns the real store
// (the embedded SQLite file has one writer, and one PostgreSQL LISTEN per
// instance is enough); changes arrive relayed by the primary. Writes are the
// admin API's, which runs in the primary only.
import { SluiceError } from '../core/errors.js';
import { type ErrorCode, SLUICE_ERRORS } from '../core/error-codes.js';
import type { ApiKeyInfo, ApiKeyRecord, CreatedKey, OverrideStore, RuleSetVersion, RuleStore, StoreChange } from '../rules/store.js';
import type { ListEntryStore } from '../rules/list-entries.js';
import type { PlanStore } from '../rules/plans.js';
import type { TeamStore } from '../rules/admin/tokens-and-audit.js';
import type { StoredRule } from '../rules/types.js';
import { type FromWorker, isSluiceMessage, type RemoteError, type RuleStoreMethod, type ToWorker } from './messages.js';

type Send = (message: FromWorker) => void;

export class IpcRuleStore implements RuleStore {
  readonly location: string;
  /** Reads relayed to the primary's store, as the rules'. */
  readonly overrides: OverrideStore = {
    list: (filter) => this.call('listOverrides', [filter]),
    get: (limitId, selector) => this.call('getOverride', [limitId, selector]),
    put: () => readOnly(),
    delete: () => readOnly(),
  };
  /** Plans' reads relayed to the primary's store; writes are the admin API's. */
  readonly plans: PlanStore = {
    list: () => this.call('listPlans', []),
    get: (name) => this.call('getPlan', [name]),
    listAssignments: (filter) => this.call('listAssignments', [filter]),
    getAssignment: (subject, id) => this.call('getAssignment', [subject, id]),
    create: () => readOnly(),
    delete: () => readOnly(),
    putLimit: () => readOnly(),
    deleteLimit: () => readOnly(),
    assign: () => readOnly(),
    unassign: () => readOnly(),
  };
  /** List entries' reads relayed to the primary's store; writes are the admin API's. */
  readonly lists: ListEntryStore = {
    list: () => this.call('listListEntries', []),
    get: (id) => this.call('getListEntry', [id]),
    add: () => readOnly(),
    delete: () => readOnly(),
  };
  /** Tokens and the audit log are the admin API's, which runs in the primary only. */
  readonly team: TeamStore = {
    createToken: async () => readOnly(),
    listTokens: async () => readOnly(),
    revokeToken: async () => readOnly(),
    tokenByHash: async () => readOnly(),
    appendAudit: async () => readOnly(),
    listAudit: async () => readOnly(),
  };
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly watchers = new Set<(change: StoreChange) => void>();
  private readonly onMessage = (message: unknown) => this.receive(message);

  constructor(
    readonly kind: 'postgres' | 'embedded',
    location: string,
    private readonly send: Send = (message) => process.send?.(message),
  ) {
    this.location = `${location} (through the primary)`;
    process.on('message', this.onMessage);
  }

  listRules(): Promise<StoredRule[]> {
    return this.call('listRules', []);
  }
  getRule(tenant: string, route: string): Promise<StoredRule | undefined> {
    return this.call('getRule', [tenant, route]);
  }
  getKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.call('getKey', [id]);
  }
  listKeys(tenant?: string): Promise<ApiKeyInfo[]> {
    return this.call('listKeys', [tenant]);
  }
  listActiveKeyHashes(): Promise<ApiKeyRecord[]> {
    return this.call('listActiveKeyHashes', []);
  }
  ruleSetVersion(): Promise<RuleSetVersion> {
    return this.call('ruleSetVersion', []);
  }
  putRule(): Promise<StoredRule> {
    return readOnly();
  }
  deleteRule(): Promise<boolean> {
    return readOnly();
  }
  createKey(): Promise<CreatedKey> {
    return readOnly();
  }
  revokeKey(): Promise<ApiKeyInfo | undefined> {
    return readOnly();
  }

  async watch(onChange: (change: StoreChange) => void): Promise<() => void> {
    this.watchers.add(onChange);
    return () => this.watchers.delete(onChange);
  }

  async close(): Promise<void> {
    process.off('message', this.onMessage);
    for (const { reject } of this.pending.values()) reject(new SluiceError('ERR_STORE_UNAVAILABLE', 'the worker is closing'));
    this.pending.clear();
  }

  private call<T>(method: RuleStoreMethod, args: unknown[]): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.send({ sluice: 'rules-call', id, method, args });
    });
  }

  private receive(message: unknown): void {
    if (!isSluiceMessage<ToWorker>(message)) return;
    if (message.sluice === 'rules-change') for (const watcher of this.watchers) watcher(message.change);
    if (message.sluice !== 'rules-reply') return;
    const call = this.pending.get(message.id);
    if (!call) return;
    this.pending.delete(message.id);
    if (message.error) call.reject(remoteError(message.error));
    else call.resolve(message.value);
  }
}

function readOnly(): never {
  throw new SluiceError('ERR_BAD_REQUEST', "a worker's rule store is read-only: write through the admin API");
}

function remoteError(error: RemoteError): Error {
  if (error.code !== undefined && Object.hasOwn(SLUICE_ERRORS, error.code)) return new SluiceError(error.code as ErrorCode, error.message);
  return new Error(error.message);
}
