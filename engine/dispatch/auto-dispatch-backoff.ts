/** The first wait of a job that auto dispatch could not place, and the longest: it doubles on each failure between. */
const FIRST_WAIT_MS = 2_000;
const LONGEST_WAIT_MS = 60_000;
/** A job not tried again this long after its wait ended has left the unassigned jobs (or auto dispatch was off). */
const FORGET_AFTER_MS = 60 * 60_000;

/**
 * The jobs of one process's auto dispatch that failed lately, each with when to try it again. Without it a pass,
 * which looks at the site's oldest unassigned jobs (50 at most), met the same ones every time: fifty jobs nobody may
 * take (in a banned zone, outside every service zone) held every later job back for good. A job tried again and
 * placed leaves; one that left the unassigned jobs another way is forgotten an hour after its wait ended (not
 * sooner: a job still waiting its turn behind others would start again at 2 s).
 */
export function createDispatchBackoff(now: () => number = Date.now) {
  const waits = new Map<string, { until: number; waitMs: number }>();
  return {
    /** The ids of the site's jobs to leave out of this pass (still waiting). */
    waiting(siteId: string): string[] {
      const at = now();
      const ids: string[] = [];
      for (const [key, wait] of waits) {
        if (wait.until + FORGET_AFTER_MS < at) waits.delete(key);
        else if (wait.until > at && key.startsWith(`${siteId}/`)) ids.push(key.slice(siteId.length + 1));
      }
      return ids;
    },
    failed(siteId: string, jobId: string): void {
      const key = `${siteId}/${jobId}`;
      const waitMs = Math.min((waits.get(key)?.waitMs ?? FIRST_WAIT_MS / 2) * 2, LONGEST_WAIT_MS);
      waits.set(key, { until: now() + waitMs, waitMs });
    },
    placed(siteId: string, jobId: string): void {
      waits.delete(`${siteId}/${jobId}`);
    },
  };
}

export type DispatchBackoff = ReturnType<typeof createDispatchBackoff>;
