import { beforeAll, expect, it } from 'vitest';
import { completeJob, openPayDesk, type PayDesk } from '../support/earnings-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

type One<T> = { data: T };

const sites = useOneSite();
let desk: PayDesk;

beforeAll(async () => {
  desk = await openPayDesk(sites.server, sites.acme, 'acme');
});

async function payIn(currency: string, rule: Record<string, unknown>): Promise<void> {
  const site = await sites.acme.as.admin.put<One<{ currency: string }>>('/api/site', { id: sites.acme.site.id, currency });
  expect(site.body.data.currency).toBe(currency);
  const created = await sites.acme.as.admin.post('/api/earnings/rule', { name: `Pay in ${currency}`, is_default: true, ...rule });
  expect(created.status).toBe(201);
}

it("pays in the currency's own minor unit: a yen has none, a Kuwaiti dinar has 1000 fils", async () => {
  await payIn('JPY', { components: [{ type: 'base', rate: 500 }, { type: 'percentage_of_job', rate: 10 }], minimum_amount: 1000 });
  const service = await sites.acme.as.admin.post<One<{ id: string }>>('/api/servicetype', { name: 'Bento run', base_price_cents: 3000 });
  const yen = await completeJob(desk, { service_type_id: service.body.data.id });
  // ¥500 base + 10% of a ¥3000 job = ¥800, raised to the ¥1000 minimum: amounts count yen, not hundredths of one.
  expect(yen).toMatchObject({ currency: 'JPY', amount_cents: 1000, job_actual_price_cents: 3000 });
  expect(yen.component_breakdown).toEqual([
    { component_type: 'base', rate: 500, input_value: 1, input_label: null, amount: 500 },
    { component_type: 'percentage_of_job', rate: 10, input_value: 3000, input_label: 'job_price', amount: 300 },
    { component_type: 'minimum_adjustment', rate: 1000, input_value: 800, input_label: null, amount: 200 },
  ]);

  await payIn('KWD', { components: [{ type: 'base', rate: 1.5 }, { type: 'per_stop', rate: 0.25 }] });
  const dinars = await completeJob(desk);
  // 1.500 KWD + 2 stops × 0.250 KWD = 2.000 KWD, in fils.
  expect(dinars).toMatchObject({ currency: 'KWD', amount_cents: 2000 });
  expect(dinars.component_breakdown.map((line) => line.amount)).toEqual([1500, 500]);
});

it("counts only prices in the site's currency in the job's price: another currency's is not added as if it were the same money", async () => {
  await payIn('EUR', { components: [{ type: 'percentage_of_job', rate: 10 }] });
  const service = await sites.acme.as.admin.post<One<{ id: string }>>('/api/servicetype', { name: 'Euro run', base_price_cents: 5000 });
  const dollars = await sites.acme.as.admin.post<One<{ id: string }>>('/api/option', { name: 'Dollar extra', price_cents: 1000, currency: 'USD' });
  const euros = await sites.acme.as.admin.post<One<{ id: string }>>('/api/option', { name: 'Euro extra', price_cents: 700 });
  const earning = await completeJob(desk, { service_type_id: service.body.data.id, option_ids: [dollars.body.data.id, euros.body.data.id] });
  expect(earning).toMatchObject({ currency: 'EUR', job_actual_price_cents: 5700, amount_cents: 570 });
});
