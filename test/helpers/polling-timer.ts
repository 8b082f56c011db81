/**
 * A container-polling timer for tests: its sleep moves its own time and returns at once, so Instagram's and Threads'
 * polling runs its real schedule (and its limit) without sleeping, and a test can read the waits it asked for.
 */
import { type PollingTimer, containerPolling, realPollingTimer } from "../../src/publishing/networks/meta/polling";

/** A timer whose time moves only when polling sleeps. */
export class MovedPollingTimer implements PollingTimer {
  private at = 0;
  /** Every wait asked for, in order (ms). */
  readonly waits: number[] = [];
  now(): number {
    return this.at;
  }
  async sleep(ms: number): Promise<void> {
    this.waits.push(ms);
    this.at += ms;
  }
}

/** Puts a fresh MovedPollingTimer in place of real time and returns it; `restorePollingTimer` puts real time back. */
export function movePollingTimer(): MovedPollingTimer {
  const timer = new MovedPollingTimer();
  containerPolling.timer = timer;
  return timer;
}

/** Puts real time back under container polling (and its default limit). */
export function restorePollingTimer(): void {
  containerPolling.timer = realPollingTimer;
  containerPolling.attempts = 30;
}
