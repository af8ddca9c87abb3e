import { beforeAll, describe, expect, it } from 'vitest';
import { completeJob, openPayDesk, type Earning, type PayDesk } from '../support/earnings-fixtures.ts';
import { signIn } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T> = { data: T };
type Many<T> = { data: T[]; meta: { pagination: { totalItems: number } } };
type Failure = { code: string; error: string };
type Rule = { id: string; name: string; is_default: boolean; is_active: boolean; minimum_amount: number | null; maximum_amount: number | null };
type Totals = { job_count: number; total_amount_cents: number; total_cents: number; total_tip_cents: number };

const sites = useTwoSites();
let desk: PayDesk;
let driver: ApiClient;

beforeAll(async () => {
  desk = await openPayDesk(sites.server, sites.acme, 'acme');
  driver = desk.driver;
});

describe('earnings rules', () => {
  it('makes the first rule the default, moves the default on request, and keeps exactly one under concurrency', async () => {
    const first = await sites.acme.as.admin.post<One<Rule>>('/api/earnings/rule', { name: 'Standard', components: [{ type: 'base', rate: 4 }, { type: 'per_distance_unit', rate: 1 }, { type: 'per_stop', rate: 0.5 }, { type: 'percentage_of_job', rate: 10 }] });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ is_default: true, is_active: true, minimum_amount: null });
    const contenders = await Promise.all(
      Array.from({ length: 8 }, (_, i) => sites.acme.as.admin.post<One<Rule>>('/api/earnings/rule', { name: `Contender ${i}`, components: [{ type: 'base', rate: i + 1 }], is_default: true })),
    );
    expect(contenders.every((r) => r.status === 201)).toBe(true);
    const defaults = await sites.acme.as.admin.get<Many<Rule>>('/api/earnings/rule/search?is_default=true');
    expect(defaults.body.data).toHaveLength(1);
    // Back to the first rule, for the jobs below.
    const back = await sites.acme.as.admin.put<One<Rule>>('/api/earnings/rule', { id: first.body.data.id, is_default: true });
    expect(back.body.data.is_default).toBe(true);
    expect((await sites.acme.as.admin.get<Many<Rule>>('/api/earnings/rule/search?is_default=true')).body.data.map((r) => r.id)).toEqual([first.body.data.id]);
    // Each rule that lost the default has it in its own audit trail, naming the rule that took it.
    const lost = contenders.find((r) => r.body.data.id !== first.body.data.id)!.body.data.id;
    type AuditRow = { action: string; previous_data: { is_default?: boolean } | null; new_data: { is_default?: boolean; replaced_by?: string } | null };
    const trail = await sites.acme.as.admin.get<Many<AuditRow>>(`/api/audit/search?entity_id=${lost}&sort=created_at`);
    expect(trail.body.data.map((r) => r.action)).toEqual(['create', 'update']);
    expect(trail.body.data[1]).toMatchObject({ previous_data: { is_default: true }, new_data: { is_default: false, replaced_by: expect.any(String) } });
    const refused = await sites.acme.as.admin.put<Failure>('/api/earnings/rule', { id: first.body.data.id, is_active: false });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('DEFAULT_RULE_REQUIRED');
  });

  it('refuses bad rules naming the field, and changes nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'X', components: [] }, 'components'],
      [{ name: 'X', components: [{ type: 'per_parsec', rate: 1 }] }, 'type'],
      [{ name: 'X', components: [{ type: 'base', rate: -1 }] }, 'rate'],
      [{ name: 'X', components: [{ type: 'base', rate: 1 }, { type: 'base', rate: 2 }] }, 'components.1.type'],
      [{ name: 'X', components: [{ type: 'percentage_of_job', rate: 150 }] }, 'rate'],
      [{ name: 'X', components: [{ type: 'base', rate: 1 }], minimum_amount: 10, maximum_amount: 5 }, 'minimum_amount'],
    ];
    const before = (await sites.acme.as.admin.get<Many<Rule>>('/api/earnings/rule/search')).body.meta.pagination.totalItems;
    for (const [body, field] of cases) {
      const response = await sites.acme.as.admin.post<Failure>('/api/earnings/rule', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.text).toContain(field);
    }
    expect((await sites.acme.as.admin.get<Many<Rule>>('/api/earnings/rule/search')).body.meta.pagination.totalItems).toBe(before);
    expect((await sites.acme.as.driver.post('/api/earnings/rule', { name: 'Mine', components: [{ type: 'base', rate: 100 }] })).status).toBe(403);
    expect((await sites.globex.as.admin.get<Many<Rule>>('/api/earnings/rule/search')).body.meta.pagination.totalItems).toBe(0);
  });
});

describe('driver earnings', () => {
  it('pays a completed job once, with a breakdown from its price, distance and stops that sums to the amount', async () => {
    const service = await sites.acme.as.admin.post<One<{ id: string }>>('/api/servicetype', { name: 'Express', base_price_cents: 2500 });
    const option = await sites.acme.as.admin.post<One<{ id: string }>>('/api/option', { name: 'Fragile', price_cents: 500 });
    const earning = await completeJob(desk, { service_type_id: service.body.data.id, option_ids: [option.body.data.id] });
    expect(earning).toMatchObject({ driver_user_id: sites.acme.users.driver.id, job_actual_price_cents: 3000, job_stop_count: 2, currency: sites.acme.site.currency, tip_amount_cents: 0 });
    // Rivoli to Montaigne: 3.7 km as the crow flies, more by road.
    expect(earning.job_distance_meters).toBeGreaterThan(3700);
    const byType = Object.fromEntries(earning.component_breakdown.map((line) => [line.component_type, line]));
    expect(byType.base).toMatchObject({ amount: 400 });
    expect(byType.per_stop).toMatchObject({ input_value: 2, input_label: 'stops', amount: 100 });
    expect(byType.percentage_of_job).toMatchObject({ input_value: 30, input_label: 'job_price', amount: 300 });
    expect(byType.per_distance_unit).toMatchObject({ input_label: 'km', amount: Math.round(byType.per_distance_unit!.input_value * 100) });
    expect(earning.component_breakdown.reduce((sum, line) => sum + line.amount, 0)).toBe(earning.amount_cents);
    expect(earning.total_amount_cents).toBe(earning.amount_cents);
  });

  it('adds tips, totals per driver and per period, and shows a driver only their own', async () => {
    const earning = await completeJob(desk);
    const tipped = await sites.acme.as.dispatcher.post<One<Earning>>('/api/earnings/tip', { job_id: earning.job_id, amount_cents: 250 });
    expect(tipped.body.data).toMatchObject({ tip_amount_cents: 250, total_amount_cents: earning.amount_cents + 250 });
    await sites.acme.as.dispatcher.post('/api/earnings/tip', { job_id: earning.job_id, amount_cents: 50 });

    const all = await sites.acme.as.dispatcher.get<Many<Earning>>('/api/earnings/search');
    const expected = all.body.data.reduce((sum, e) => sum + e.amount_cents, 0);
    const summary = await sites.acme.as.dispatcher.get<One<(Totals & { driver_user_id: string })[]>>('/api/earnings/summary');
    expect(summary.body.data).toEqual([{ driver_user_id: sites.acme.users.driver.id, job_count: all.body.data.length, total_amount_cents: expected, total_tip_cents: 300, total_cents: expected + 300 }]);

    const today = new Intl.DateTimeFormat('en-CA', { timeZone: sites.acme.site.timezone }).format(new Date());
    const days = await sites.acme.as.dispatcher.get<One<(Totals & { period: string })[]>>('/api/earnings/timeseries?period=day');
    expect(days.body.data).toEqual([{ period: today, job_count: all.body.data.length, total_amount_cents: expected, total_tip_cents: 300, total_cents: expected + 300 }]);
    const months = await sites.acme.as.dispatcher.get<One<(Totals & { period: string })[]>>('/api/earnings/timeseries?period=month');
    expect(months.body.data[0]!.period).toBe(today.slice(0, 7));
    const weeks = await sites.acme.as.dispatcher.get<One<(Totals & { period: string })[]>>('/api/earnings/timeseries?period=week');
    expect(weeks.body.data[0]!.period).toMatch(/^\d{4}-W\d{2}$/);

    // Another driver's filter is ignored for a driver: they see their own.
    const own = await driver.get<Many<Earning>>('/api/earnings/search?driver_user_id=usr_someone_else');
    expect(own.body.data.length).toBe(all.body.data.length);
    const created = await sites.acme.as.admin.post<One<{ id: string }>>('/api/user', { email: 'idle.driver@acme.example', password: 'idle-driver-pw', role: 'driver' });
    const { access_token } = await signIn(sites.server.client('acme'), 'idle.driver@acme.example', 'idle-driver-pw');
    const idle = sites.server.client('acme').as({ accessToken: access_token });
    expect((await idle.get<Many<Earning>>('/api/earnings/search')).body.data).toEqual([]);
    expect((await idle.get<One<Totals[]>>('/api/earnings/summary')).body.data).toEqual([]);
    expect(created.status).toBe(201);

    expect((await sites.globex.as.admin.get<Many<Earning>>('/api/earnings/search')).body.data).toEqual([]);
    expect((await sites.globex.as.admin.post<Failure>('/api/earnings/tip', { job_id: earning.job_id, amount_cents: 100 })).status).toBe(404);
    expect((await sites.acme.as.dispatcher.post<Failure>('/api/earnings/tip', { job_id: earning.job_id, amount_cents: 0 })).status).toBe(400);
    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=DriverEarning&entity_id=${earning.id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'update', 'update']);
  });

  it("measures the distance paid with the site's mapping integration, as its ETAs and /gis routes do", async () => {
    const before = await completeJob(desk);
    const tuned = await sites.acme.as.admin.put('/api/integration?integration_key=offline', { config: { profiles: { car: { detour_factor: 3 } } }, is_active: true });
    expect(tuned.status).toBe(200);
    try {
      const after = await completeJob(desk);
      // The same stops: the default detour (1.3) against the site's 3.
      expect(after.job_distance_meters / before.job_distance_meters).toBeCloseTo(3 / 1.3, 2);
    } finally {
      await sites.acme.as.admin.put('/api/integration?integration_key=offline', { is_active: false });
    }
  });

  it('pays from the offline estimate when the site routing engine fails, rather than not at all', async () => {
    const before = await completeJob(desk);
    const dead = await sites.acme.as.admin.put('/api/integration?integration_key=osrm', { config: { base_url: 'https://osrm.invalid', timeout_ms: 500 }, is_active: true });
    expect(dead.status).toBe(200);
    try {
      const after = await completeJob(desk);
      expect(after.job_distance_meters).toBe(before.job_distance_meters);
    } finally {
      await sites.acme.as.admin.put('/api/integration?integration_key=osrm', { is_active: false });
    }
  });

  it('counts tips sent at once, and refuses one that would take the total past what the amounts hold, changing nothing', async () => {
    const earning = await completeJob(desk);
    const tip = () => sites.acme.as.dispatcher.post<Failure>('/api/earnings/tip', { job_id: earning.job_id, amount_cents: 10_000_000 });
    // 214 tips at ten at once: every one counts (each is read, added and written in turn).
    for (let batch = 0; batch < 21; batch++) await Promise.all(Array.from({ length: 10 }, tip));
    for (let i = 0; i < 4; i++) await tip();
    const read = async () => (await sites.acme.as.dispatcher.get<Many<Earning>>(`/api/earnings/search?job_id=${earning.job_id}`)).body.data[0]!.tip_amount_cents;
    expect(await read()).toBe(2_140_000_000);
    const last = await tip();
    expect([last.status, last.body.code]).toEqual([400, 'AMOUNT_TOO_LARGE']);
    expect(await read()).toBe(2_140_000_000);
  });

  it('clamps a job to the rule minimum', async () => {
    const rule = await sites.acme.as.admin.post<One<Rule>>('/api/earnings/rule', { name: 'Guaranteed', components: [{ type: 'per_stop', rate: 1 }], minimum_amount: 8.5, maximum_amount: 30, is_default: true });
    expect(rule.body.data).toMatchObject({ is_default: true, minimum_amount: 8.5, maximum_amount: 30 });
    const earning = await completeJob(desk);
    expect(earning.amount_cents).toBe(850);
    expect(earning.component_breakdown).toEqual([
      { component_type: 'per_stop', rate: 1, input_value: 2, input_label: 'stops', amount: 200 },
      { component_type: 'minimum_adjustment', rate: 8.5, input_value: 2, input_label: null, amount: 650 },
    ]);
  });
});
