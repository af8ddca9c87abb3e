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

/** Wraps `pass` so it never runs twice at once; its errors go to `onError` (a background pass has no caller). */
export function createCoalescedTask(pass: () => Promise<void>, onError: (error: unknown) => void): CoalescedTask {
  let scheduled: NodeJS.Immediate | null = null;
  let running: Promise<void> | null = null;
  let rerun = false;
  let stopped = false;

  const run = (): void => {
    scheduled = null;
    running = pass()
      .catch(onError)
      .finally(() => {
        running = null;
        if (rerun && !stopped) {
          rerun = false;
          scheduled = setImmediate(run);
        }
      });
  };

  return {
    trigger() {
      if (stopped || scheduled) return;
      if (running) rerun = true;
      else scheduled = setImmediate(run);
    },
    async stop() {
      stopped = true;
      if (scheduled) clearImmediate(scheduled);
      scheduled = null;
      await running;
    },
  };
}
