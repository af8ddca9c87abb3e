/**
 * Groups the requests that concurrent queue jobs make for one site into one unit of work (one tenant transaction,
 * one statement), the way a database groups commits. A request never waits for a batch that had already started
 * when it arrived: it joins the next one, which starts on the next macrotask, or as soon as the site's running batch
 * ends. So every answer comes from work begun after the request was made (a read sees everything committed before
 * the request), and a lone request costs one tick.
 *
 * `run` answers the requests of one batch in order. When it throws, each request of the batch is run again on its
 * own, so one bad request (a row whose subscription was just deleted) fails only its own caller.
 */
export type SiteBatcher<In, Out> = (siteId: string, input: In) => Promise<Out>;

type Pending<In, Out> = { input: In; resolve: (out: Out) => void; reject: (error: unknown) => void };
type SiteState<In, Out> = { waiting: Pending<In, Out>[]; running: boolean; scheduled: boolean };

export function createSiteBatcher<In, Out>(run: (siteId: string, inputs: In[]) => Promise<Out[]>, maxBatch = 500): SiteBatcher<In, Out> {
  const sites = new Map<string, SiteState<In, Out>>();

  const start = (siteId: string, state: SiteState<In, Out>): void => {
    state.scheduled = false;
    const batch = state.waiting.splice(0, maxBatch);
    if (batch.length === 0) {
      sites.delete(siteId);
      return;
    }
    state.running = true;
    void settle(siteId, batch).finally(() => {
      state.running = false;
      if (state.waiting.length > 0) schedule(siteId, state);
      else sites.delete(siteId);
    });
  };

  const schedule = (siteId: string, state: SiteState<In, Out>): void => {
    if (state.scheduled || state.running) return;
    state.scheduled = true;
    setImmediate(() => start(siteId, state));
  };

  const settle = async (siteId: string, batch: Pending<In, Out>[]): Promise<void> => {
    try {
      const outs = await run(siteId, batch.map((p) => p.input));
      batch.forEach((p, i) => p.resolve(outs[i]!));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      await Promise.all(
        batch.map((p) =>
          run(siteId, [p.input]).then(
            (outs) => p.resolve(outs[0]!),
            (single: unknown) => p.reject(single),
          ),
        ),
      );
    }
  };

  return (siteId, input) =>
    new Promise<Out>((resolve, reject) => {
      let state = sites.get(siteId);
      if (!state) {
        state = { waiting: [], running: false, scheduled: false };
        sites.set(siteId, state);
      }
      state.waiting.push({ input, resolve, reject });
      schedule(siteId, state);
    });
}
