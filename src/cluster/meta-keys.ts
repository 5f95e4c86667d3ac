// Redis keys the resilience layer keeps besides buckets. One hash tag, so the
// heartbeat script touches them all on one cluster node.
export const INSTANCES_KEY = 'sluice:{meta}:instances';
export const REGION_SHARES_KEY = 'sluice:{meta}:region-shares';
export const regionRequestsKey = (region: string) => `sluice:{meta}:requests:${region}`;
