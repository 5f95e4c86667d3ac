// The rapid-reset row's attacker, in a process of its own (forked by
// gateway-rapid-reset.ts): it attacks from the start until the parent sends
// 'stop', then answers with what it sent and received (test/helpers/rapid-reset.ts
// writes the frames). It says 'attacking' once its first connection is up, so
// the measured window starts with the attack (tsx takes seconds to start on a
// loaded machine).
import { rapidReset } from '../../test/helpers/rapid-reset.js';

const { url, ca, localAddress } = JSON.parse(process.argv[2] ?? '{}') as { url: string; ca: string; localAddress?: string };
let running = true;
process.once('message', () => {
  running = false;
});
let told = false;
const onSession = () => {
  if (!told) process.send?.('attacking');
  told = true;
};
const stats = await rapidReset({ url, ca: Buffer.from(ca, 'base64'), path: '/orders', headers: { 'x-api-key': 'bench-attacker' }, onSession, ...(localAddress ? { localAddress } : {}) }, () => running);
process.send?.(stats, () => process.exit(0));
