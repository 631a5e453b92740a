// A clock is passed in wherever time matters, so tests can move it and expiry is testable.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.#ms = typeof start === "number" ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
  set(at: Date): void {
    this.#ms = at.getTime();
  }
}
