/** Time as a port, so tests can move it (expiry, leases) without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
