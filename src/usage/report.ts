// A usage report after the fact: the decision service is told what an answer
// used once it has ended (Envoy's `apply_on_stream_done` call, forward-auth's
// POST /usage) and charges it without refusing, through the engine's adjust: a
// debt past empty is allowed, repaid by the refill before anything is admitted
// again. A report larger than the limit's whole capacity charges the capacity,
// so one bad number cannot lock a bucket for a long time; a store that fails
// the charge is counted, never an error for the proxy (its request is done).
import type { Bucket } from '../core/ids.js';
import { capacityOf, type Rule } from '../policies/rule.js';
import type { Engine } from '../limiter/engine/engine.js';
import { usageReportedUnits, usageReports } from '../metrics/usage.js';

export type ReportFace = 'envoy' | 'forward_auth';

/** One limit a report charges: its bucket, under its rule. */
export interface ReportedLimit {
  readonly bucket: Bucket;
  readonly rule: Rule;
}

/**
 * Charges the bucket `units` used, less `reserved` (what the request was
 * charged when admitted: the difference is given back when negative); never
 * rejects. Whether the store took it.
 */
export async function chargeReport(engine: Pick<Engine, 'adjust'>, limit: ReportedLimit, units: number, reserved: number, face: ReportFace): Promise<boolean> {
  const capacity = capacityOf(limit.rule);
  const capped = units > capacity;
  const delta = (capped ? capacity : units) - reserved;
  if (delta === 0) {
    usageReports.inc({ face, result: capped ? 'capped' : 'charged' });
    return true;
  }
  try {
    if (engine.adjust === undefined) throw new Error('the engine cannot adjust a bucket');
    await engine.adjust(limit.bucket, limit.rule, delta);
  } catch {
    usageReports.inc({ face, result: 'failed' });
    return false;
  }
  usageReports.inc({ face, result: capped ? 'capped' : 'charged' });
  if (delta > 0) usageReportedUnits.inc({ face }, delta);
  return true;
}
