// After an HTTP/2 connection is cut for resetting streams too fast (rapid
// reset), the same address is refused new connections for a while, at TCP
// accept, before any TLS handshake. Cutting the connection alone does not
// stop the attack: the client connects again at once, and each new
// connection costs a handshake and a burst of streams before its own cut. A
// trusted proxy's address is never refused (every client behind it would lose
// the gateway); behind a balancer that hides client addresses, turn it off.
import { Counter } from 'prom-client';
import { BoundedLru } from '../core/lru.js';
import { resilienceRegistry } from '../metrics/registry.js';

/** Addresses refused at once; a flood from many addresses forgets the oldest first. */
const MAX_ADDRESSES = 100_000;

// No address in a label: the series stay two whatever the attack.
const cuts = new Counter({
  name: 'sluice_http2_reset_cuts_total',
  help: 'HTTP/2 connections cut with GOAWAY ENHANCE_YOUR_CALM for resetting streams faster than limits.http2MaxResetsPerSecond (rapid reset)',
  registers: [resilienceRegistry],
});
const refusals = new Counter({
  name: 'sluice_http2_cooldown_refusals_total',
  help: 'Connections closed at accept because their address was cut for its reset rate less than limits.http2ResetCooldownMs ago',
  registers: [resilienceRegistry],
});

export class ResetCooldown {
  /** address → epoch ms its cool-down ends. */
  private readonly until = new BoundedLru<string, number>(MAX_ADDRESSES);

  constructor(
    private readonly ms: number,
    /** Addresses never refused: the trusted proxies (asked at each cut, so a reload applies). */
    private readonly exempt: (address: string) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** A connection from `address` was cut for its resets. */
  cut(address: string | undefined): void {
    cuts.inc();
    if (this.ms <= 0 || address === undefined) return;
    if (this.exempt(address)) return;
    this.until.set(address, this.now() + this.ms);
  }

  /** Whether a new connection from `address` is refused. */
  refuses(address: string | undefined): boolean {
    if (address === undefined || this.until.size === 0) return false;
    const end = this.until.peek(address);
    if (end === undefined) return false;
    if (this.now() < end) {
      refusals.inc();
      return true;
    }
    this.until.delete(address);
    return false;
  }
}
