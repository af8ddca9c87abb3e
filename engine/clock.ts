/** All time comes from a clock passed in, so tests and the simulator can run the real code on virtual time. */
export type Clock = { now(): Date };

export const systemClock: Clock = { now: () => new Date() };
