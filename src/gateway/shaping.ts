// Traffic shaping: a leaky-bucket decision may accept a request but ask to hold
// it `delayMs` first. Held requests are counted per process; past the cap new
// ones are refused rather than piling up timers and sockets without bound.
import type { ServerResponse } from 'node:http';

/** The longest delay one timer holds: node fires a longer one after 1 ms, which would forward a held request at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class ShapingQueue {
  private held = 0;

  constructor(private readonly maxHeld: number) {}

  get size(): number {
    return this.held;
  }

  /** Runs `release` after `delayMs`, or never if the client leaves first. False when the queue is full. */
  hold(res: ServerResponse, delayMs: number, release: () => void): boolean {
    if (this.held >= this.maxHeld) return false;
    this.held++;
    let timer: NodeJS.Timeout;
    const onClose = () => {
      clearTimeout(timer);
      this.held--;
    };
    const fire = () => {
      res.off('close', onClose);
      this.held--;
      release();
    };
    // A queue may drain over months (nginx allows it); such a delay is waited out in timer-sized steps.
    const releaseAt = delayMs > MAX_TIMER_MS ? Date.now() + delayMs : 0;
    const wait = (ms: number) => {
      timer = ms > MAX_TIMER_MS ? setTimeout(() => wait(releaseAt - Date.now()), MAX_TIMER_MS) : setTimeout(fire, ms);
    };
    wait(delayMs);
    res.once('close', onClose);
    return true;
  }
}
