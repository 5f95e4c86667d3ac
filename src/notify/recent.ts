// The last notifications' outcomes, for the operator's page (GET
// /notifications): a fixed-size ring, so a flood of events costs no memory.
// Neither the URL nor the secret is kept.
import type { NotifyOutcome } from '../metrics/notifications.js';

export interface NotificationRecord {
  readonly id: string;
  /** When the outcome was known, epoch ms. */
  readonly at: number;
  readonly outcome: Exclude<NotifyOutcome, 'duplicate'>;
  readonly tenant: string | null;
  readonly limit: string;
  readonly route: string | undefined;
  readonly threshold: number;
  readonly attempts: number;
  /** The receiver's last status, or why there was none (`timeout`, `ECONNREFUSED`, `queue full`, `shutdown`). */
  readonly detail: string | undefined;
}

export const RECENT_SIZE = 100;

export class RecentNotifications {
  private readonly ring: (NotificationRecord | undefined)[];
  private next = 0;

  constructor(readonly size = RECENT_SIZE) {
    this.ring = new Array<NotificationRecord | undefined>(size);
  }

  add(record: NotificationRecord): void {
    this.ring[this.next] = record;
    this.next = (this.next + 1) % this.size;
  }

  /** Newest first. */
  list(): NotificationRecord[] {
    const out: NotificationRecord[] = [];
    for (let i = 1; i <= this.size; i++) {
      const record = this.ring[(this.next - i + this.size) % this.size];
      if (record !== undefined) out.push(record);
    }
    return out;
  }
}
