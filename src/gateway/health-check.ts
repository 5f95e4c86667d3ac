// A route's active health check: every intervalMs each instance is asked
// `GET healthCheck.path` through its own pool; a 2xx or 3xx within timeoutMs
// keeps it in rotation, anything else (another status, a refused connection,
// no answer in time) takes it out until a check passes. Checks never overlap:
// the next round starts when the last one ended.
import type { HealthCheckConfig } from '../config/types.js';
import type { Balancer, Instance } from './balancer.js';

export class HealthCheck {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly balancer: Balancer,
    private readonly config: HealthCheckConfig,
  ) {
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.round().finally(() => this.schedule(this.config.intervalMs)), delayMs);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    await Promise.all(this.balancer.all.map(async (instance) => this.balancer.setHealthy(instance, await this.probe(instance))));
  }

  private async probe(instance: Instance): Promise<boolean> {
    const signal = AbortSignal.timeout(this.config.timeoutMs);
    try {
      const answer = await instance.pool.request({ path: this.config.path, method: 'GET', headers: { 'user-agent': 'sluice-health-check' }, signal, headersTimeout: this.config.timeoutMs, bodyTimeout: this.config.timeoutMs });
      await answer.body.dump();
      return answer.statusCode >= 200 && answer.statusCode < 400;
    } catch {
      return false;
    }
  }
}
