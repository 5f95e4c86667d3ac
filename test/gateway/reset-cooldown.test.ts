// The rapid-reset cool-down on its own, with a manual clock: which addresses
// are refused at accept after a cut, for how long, and which never are.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { ResetCooldown } from '../../src/gateway/reset-cooldown.js';

const counted = async (name: string) => (await resilienceRegistry.getSingleMetric(name)?.get())?.values[0]?.value ?? 0;

describe('ResetCooldown', () => {
  it('refuses a cut address until its cool-down ends, then lets it in again', async () => {
    let now = 1_000;
    const cooldown = new ResetCooldown(10_000, () => false, () => now);
    const [cutsBefore, refusalsBefore] = [await counted('sluice_http2_reset_cuts_total'), await counted('sluice_http2_cooldown_refusals_total')];
    assert.equal(cooldown.refuses('192.0.2.7'), false, 'nothing cut yet');
    cooldown.cut('192.0.2.7');
    assert.equal(cooldown.refuses('192.0.2.7'), true);
    assert.equal(cooldown.refuses('192.0.2.8'), false, 'another address is untouched');
    now += 9_999;
    assert.equal(cooldown.refuses('192.0.2.7'), true, 'still cooling down');
    now += 1;
    assert.equal(cooldown.refuses('192.0.2.7'), false, 'the cool-down is over');
    assert.equal(cooldown.refuses('192.0.2.7'), false, 'and forgotten');
    assert.equal(await counted('sluice_http2_reset_cuts_total'), cutsBefore + 1);
    assert.equal(await counted('sluice_http2_cooldown_refusals_total'), refusalsBefore + 2);
  });

  it('a second cut during the cool-down starts it again from that cut', () => {
    let now = 0;
    const cooldown = new ResetCooldown(1_000, () => false, () => now);
    cooldown.cut('2001:db8::1');
    now = 800;
    cooldown.cut('2001:db8::1');
    now = 1_500;
    assert.equal(cooldown.refuses('2001:db8::1'), true);
    now = 1_800;
    assert.equal(cooldown.refuses('2001:db8::1'), false);
  });

  it('never refuses an exempt (trusted proxy) address, nor any with the cool-down at 0', () => {
    const trusted = new ResetCooldown(10_000, (address) => address === '10.0.0.1');
    trusted.cut('10.0.0.1');
    assert.equal(trusted.refuses('10.0.0.1'), false);
    const off = new ResetCooldown(0, () => false);
    off.cut('192.0.2.7');
    assert.equal(off.refuses('192.0.2.7'), false);
    assert.equal(off.refuses(undefined), false, 'a socket that already lost its address');
  });

  it('holds a bounded number of addresses: a flood from many forgets the oldest first', () => {
    const cooldown = new ResetCooldown(60_000, () => false);
    for (let i = 0; i < 100_001; i++) cooldown.cut(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    assert.equal(cooldown.refuses('10.0.0.0'), false, 'the first cut was forgotten');
    assert.equal(cooldown.refuses('10.1.134.160'), true, 'the last one is held');
  });
});
