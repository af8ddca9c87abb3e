/** A background pass that many callers can ask for without piling up runs. */
export type CoalescedTask = {
  /**
   * Asks for a pass soon (on the next macrotask, so a burst of requests in one tick costs one pass). A request that
   * arrives while a pass runs schedules exactly one more pass after it, so no request is lost.
   */
  trigger(): void;
  /** Refuses further passes and resolves when the running one (if any) has finished. */
  stop(): Promise<void>;
};

/**
 * Wraps `pass` so it never runs twice at once; its errors go to `onError` (a background pass has no caller).
 * With `minGapMs`, a pass starts no sooner than that after the previous one started: requests in between wait for
 * it (one timer), so a steady stream of requests costs one pass per gap instead of one per request.
 */
export function createCoalescedTask(pass: () => Promise<void>, onError: (error: unknown) => void, minGapMs = 0): CoalescedTask {
  /** The pass asked for and not yet started, with how to call it off (an immediate, or a timer while the gap lasts). */
  let scheduled: { cancel(): void } | null = null;
  let running: Promise<void> | null = null;
  let rerun = false;
  let stopped = false;
  let lastStart = Number.NEGATIVE_INFINITY;

  const schedule = (): void => {
    const wait = lastStart + minGapMs - Date.now();
    if (wait > 0) {
      const timer = setTimeout(run, wait);
      scheduled = { cancel: () => clearTimeout(timer) };
    } else {
      const immediate = setImmediate(run);
      scheduled = { cancel: () => clearImmediate(immediate) };
    }
  };

  const run = (): void => {
    // A timer can fire a millisecond or two early by Date.now() (libuv counts from the loop's cached time, taken
    // before setTimeout was called): wait out the rest of the gap rather than start too soon.
    if (lastStart + minGapMs > Date.now()) return schedule();
    scheduled = null;
    lastStart = Date.now();
    running = pass()
      .catch(onError)
      .finally(() => {
        running = null;
        if (rerun && !stopped) {
          rerun = false;
          schedule();
        }
      });
  };

  return {
    trigger() {
      if (stopped || scheduled) return;
      if (running) rerun = true;
      else schedule();
    },
    async stop() {
      stopped = true;
      scheduled?.cancel();
      scheduled = null;
      await running;
    },
  };
}
