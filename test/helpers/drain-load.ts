// A keep-alive client under continuous load, for the drain tests: each worker
// sends one request after another on a shared 32-socket agent and records what
// happened, until the gateway refuses new connections.
import { Agent, request } from 'undici';

export interface Outcome {
  sentAt: number;
  status?: number;
  connection?: string;
  error?: string;
}

export class KeepAliveLoad {
  readonly outcomes: Outcome[] = [];
  private readonly agent = new Agent({ connections: 32 });
  private readonly workers: Promise<void>[] = [];

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  start(workers: number): void {
    for (let i = 0; i < workers; i++) this.workers.push(this.work());
  }

  /** Resolves when every worker met a refused connection (the listener is gone). */
  async finished(): Promise<void> {
    await Promise.all(this.workers);
    await this.agent.close();
  }

  private async work(): Promise<void> {
    for (;;) {
      const outcome: Outcome = { sentAt: performance.now() };
      this.outcomes.push(outcome);
      try {
        const response = await request(this.url, { method: 'POST', headers: this.headers, body: '{"n":1}', dispatcher: this.agent });
        await response.body.text();
        outcome.status = response.statusCode;
        outcome.connection = String(response.headers.connection ?? '');
      } catch (error) {
        outcome.error = (error as { code?: string }).code ?? String(error);
        if (outcome.error === 'ECONNREFUSED') return;
      }
    }
  }
}
