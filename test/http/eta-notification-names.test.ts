import { expect, it } from 'vitest';
import { driveTo, newEtaDriver, outbox } from '../support/eta-fixtures.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

type One<T> = { data: T };

/** 5 Avenue Montaigne, and a point `km` straight-line kilometres north of it. */
const STOP = { lat: 48.8662, lng: 2.3047 };
const north = (km: number) => ({ lat: STOP.lat + km / 111.195, lng: STOP.lng });

const site = useOneSite();

it('never names a driver or a customer by their email in ETA notifications: people who gave no name get a neutral one', async () => {
  const notify = (config: Record<string, unknown>) => site.acme.as.admin.put('/api/eta/notification-config', { trigger_type: 'time_before_arrival', trigger_value: 10, delivery_method: 'email', debounce_seconds: 600, ...config });
  expect((await notify({ recipient_type: 'customer' })).status).toBe(200);
  expect((await notify({ recipient_type: 'driver', template: { title: 'Next stop', body: '{{customer_name}} expects you at {{stop_address}}.' } })).status).toBe(200);

  // Neither has a name on file: only their emails.
  const driver = await newEtaDriver(site.server, site.acme, 'acme', { email: 'nameless.driver@acme.example' });
  const customer = await site.acme.as.admin.post<One<{ id: string }>>('/api/user', { email: 'nameless.customer@acme.example', password: 'customer-password', role: 'customer' });
  expect(customer.status).toBe(201);
  const job = await createJob(site.acme.as.dispatcher, {
    customer_email: undefined,
    customer_user_id: customer.body.data.id,
    driver_user_id: driver.id,
    stops: [{ type: 'dropoff', street_address: '5 Avenue Montaigne', city: 'Paris', point: STOP, contact_name: 'Front desk' }],
  });
  const jobStates = await stateIds(site.acme.as.admin, 'job');
  expect((await site.acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);

  await driveTo(site.server, site.acme, driver, north(3));
  const [toCustomer] = await outbox(site.acme, 'email', 'nameless.customer@acme.example');
  expect(toCustomer!.body).toMatch(/^Your driver will arrive at/);
  expect(toCustomer!.body).not.toContain('nameless.driver');
  // The customer gave no name: the stop's contact stands in, as for a job without a customer account.
  const [toDriver] = await outbox(site.acme, 'email', 'nameless.driver@acme.example');
  expect(toDriver!.body).toBe('Front desk expects you at 5 Avenue Montaigne, Paris.');
});
