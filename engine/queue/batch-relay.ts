import { createCoalescedTask } from './coalesced-task.ts';

/** Moves committed rows to a queue in batches: kicked after commits, polled as a safety net. */
export type BatchRelay = {
  /** Starts polling (and relays what is pending now). */
  start(): void;
  /** Stops polling and kicks; resolves once the pass in flight (if any) has finished its batch. */
  stop(): Promise<void>;
  /** Relays every pending row, batch by batch; returns how many rows this call moved. */
  relayOnce(): Promise<number>;
  /** Asks for a pass now (coalesced: a burst of kicks costs one pass). */
  kick(): void;
};

export type BatchRelayOptions = {
  /** Moves one batch in its own transaction; returns how many rows it moved. */
  moveBatch: () => Promise<number>;
  /** A batch smaller than this means nothing more is pending. */
  batchSize: number;
  pollIntervalMs: number;
  /** Least time between the starts of two kicked passes (ms; default 0): see createCoalescedTask. */
  minPassGapMs?: number;
  /** A failed pass (the rows stay pending for the next one). */
  onError: (error: unknown) => void;
  onMoved?: (moved: number) => void;
};

/** The lifecycle the outbox relay and the notification relay share: one pass at a time, polling, kicks, stop. */
export function createBatchRelay(options: BatchRelayOptions): BatchRelay {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;

  const relayOnce = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const moved = await options.moveBatch();
      total += moved;
      if (moved < options.batchSize || stopped) return total;
    }
  };

  const pass = createCoalescedTask(async () => {
    const moved = await relayOnce();
    options.onMoved?.(moved);
  }, options.onError, options.minPassGapMs);

  return {
    start() {
      if (stopped || timer) return;
      timer = setInterval(() => pass.trigger(), options.pollIntervalMs);
      timer.unref();
      pass.trigger();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      await pass.stop();
    },
    relayOnce,
    kick: () => pass.trigger(),
  };
}
