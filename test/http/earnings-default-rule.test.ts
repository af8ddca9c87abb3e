import { beforeAll, expect, it } from 'vitest';
import { completeJob, openPayDesk, type PayDesk } from '../support/earnings-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

type One<T> = { data: T };
type Rule = { id: string; is_default: boolean; is_active: boolean };

const sites = useOneSite();
let desk: PayDesk;

beforeAll(async () => {
  desk = await openPayDesk(sites.server, sites.acme, 'acme');
});

it("makes a site's first rule its default even when created with is_default: false, so its drivers are paid", async () => {
  const first = await sites.acme.as.admin.post<One<Rule>>('/api/earnings/rule', { name: 'Flat', components: [{ type: 'base', rate: 6 }], is_default: false });
  expect(first.status).toBe(201);
  expect(first.body.data).toMatchObject({ is_default: true, is_active: true });

  // Once a default exists, is_default: false means what it says.
  const second = await sites.acme.as.admin.post<One<Rule>>('/api/earnings/rule', { name: 'Spare', components: [{ type: 'base', rate: 9 }], is_default: false });
  expect(second.body.data.is_default).toBe(false);

  const earning = await completeJob(desk);
  expect(earning).toMatchObject({ amount_cents: 600, driver_user_id: sites.acme.users.driver.id });
});
