import { sessionClient, type SiteFixture } from './fixtures.ts';
import type { ApiClient } from './http-client.ts';
import { createJob, stateIds } from './job-fixtures.ts';
import type { TestServer } from './test-server.ts';

export type EarningLine = { component_type: string; rate: number; input_value: number; input_label: string | null; amount: number };

export type Earning = {
  id: string; job_id: string; driver_user_id: string; amount_cents: number; tip_amount_cents: number; total_amount_cents: number;
  currency: string; component_breakdown: EarningLine[]; job_actual_price_cents: number; job_distance_meters: number; job_stop_count: number;
};

/** A site's dispatcher and its driver signed in (stops are moved by the driver themself), with the workflow's state ids. */
export type PayDesk = { site: SiteFixture; driver: ApiClient; jobStates: Record<string, string>; stopStates: Record<string, string> };

export async function openPayDesk(server: TestServer, site: SiteFixture, subdomain: string): Promise<PayDesk> {
  return {
    site,
    driver: await sessionClient(server, subdomain, site.users.driver),
    jobStates: await stateIds(site.as.admin, 'job'),
    stopStates: await stateIds(site.as.admin, 'stop'),
  };
}

/**
 * A job for the site's driver, dispatched and driven to completion stop by stop; `cancelStops` lists the indexes of
 * stops the dispatcher cancels first. Answers the job's earning once the earnings consumer has recorded it.
 */
export async function completeJob(desk: PayDesk, extra: Record<string, unknown> = {}, cancelStops: number[] = []): Promise<Earning> {
  return waitForEarning(desk.site.as.dispatcher, await driveToCompletion(desk, extra, cancelStops));
}

/** {@link completeJob} without waiting for the earning: answers the job's id once its last stop is completed. */
export async function driveToCompletion(desk: PayDesk, extra: Record<string, unknown> = {}, cancelStops: number[] = []): Promise<string> {
  const dispatcher = desk.site.as.dispatcher;
  const job = await createJob(dispatcher, { driver_user_id: desk.site.users.driver.id, ...extra });
  await dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: desk.jobStates.dispatched });
  for (const [index, stop] of job.stops.entries()) {
    if (cancelStops.includes(index)) {
      const cancelled = await dispatcher.post('/api/stop/state', { stop_id: stop.id, workflow_state_id: desk.stopStates.cancelled });
      if (cancelled.status !== 200) throw new Error(`stop cancel failed: ${cancelled.text}`);
      continue;
    }
    for (const state of ['en_route', 'arrived', 'completed']) {
      const moved = await desk.driver.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: desk.stopStates[state] });
      if (moved.status !== 200) throw new Error(`stop move failed: ${moved.text}`);
    }
  }
  return job.id;
}

/** The job's earning, polled until the consumer has written it (fails after ten seconds). */
export async function waitForEarning(client: ApiClient, jobId: string): Promise<Earning> {
  for (let i = 0; i < 100; i += 1) {
    const found = await client.get<{ data: Earning[] }>(`/api/earnings/search?job_id=${jobId}`);
    if (found.body.data[0]) return found.body.data[0];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no earning recorded for ${jobId}`);
}
