import { beforeAll, describe, expect, it } from 'vitest';
import { completeJob, openPayDesk, type PayDesk } from '../support/earnings-fixtures.ts';
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
});
