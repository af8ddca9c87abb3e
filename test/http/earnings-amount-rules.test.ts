import { beforeAll, describe, expect, it } from 'vitest';
import { completeJob, openPayDesk, type PayDesk } from '../support/earnings-fixtures.ts';
import { jobRequest } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

const sites = useOneSite();
let desk: PayDesk;

beforeAll(async () => {
  desk = await openPayDesk(sites.server, sites.acme, 'acme');
});

async function payWith(components: { type: string; rate: number }[]): Promise<void> {
  const created = await sites.acme.as.admin.post('/api/earnings/rule', { name: components.map((c) => c.type).join(' + '), components, is_default: true });
  expect(created.status).toBe(201);
}

describe('what a completed job pays', () => {
  it('never pays below zero: a service fee larger than the rest leaves 0, with the line that says so', async () => {
    await payWith([{ type: 'base', rate: 1 }, { type: 'service_fee', rate: 5 }]);
    const earning = await completeJob(desk);
    expect(earning).toMatchObject({ amount_cents: 0, total_amount_cents: 0 });
    expect(earning.component_breakdown).toEqual([
      { component_type: 'base', rate: 1, input_value: 1, input_label: null, amount: 100 },
      { component_type: 'service_fee', rate: 5, input_value: 1, input_label: null, amount: -500 },
      { component_type: 'minimum_adjustment', rate: 0, input_value: -4, input_label: null, amount: 400 },
    ]);
  });

  it('leaves a cancelled stop out of the stops and the distance paid', async () => {
    await payWith([{ type: 'per_stop', rate: 2 }, { type: 'per_distance_unit', rate: 1 }]);
    const [pickup, dropoff] = jobRequest().stops as Record<string, unknown>[];
    const versailles = { type: 'dropoff', street_address: "Place d'Armes", city: 'Versailles', point: { lat: 48.8049, lng: 2.1204 } };
    const direct = await completeJob(desk);
    const detourCancelled = await completeJob(desk, { stops: [pickup, versailles, dropoff] }, [1]);
    expect(detourCancelled.job_stop_count).toBe(2);
    expect(detourCancelled.component_breakdown[0]).toEqual({ component_type: 'per_stop', rate: 2, input_value: 2, input_label: 'stops', amount: 400 });
    // The driver never went to Versailles: paid the same road as a job with only the other two stops.
    expect(detourCancelled.job_distance_meters).toBe(direct.job_distance_meters);
  });
});
