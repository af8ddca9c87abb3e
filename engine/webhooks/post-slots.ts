/**
 * Caps the POSTs in flight in this process. A batch job starts all its events at once; past the cap they wait here,
 * before their request exists, so a request's timeout counts from when it is sent, not from when it was queued.
 */
export type PostSlots = <T>(post: () => Promise<T>) => Promise<T>;

export function createPostSlots(limit: number): PostSlots {
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else inFlight--;
  };
  return async (post) => {
    if (inFlight < limit) inFlight++;
    // A freed slot passes straight to the next waiter, so `inFlight` stays counted for it.
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await post();
    } finally {
      release();
    }
  };
}
