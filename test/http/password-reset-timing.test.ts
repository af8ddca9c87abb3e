import { afterAll, expect, it } from 'vitest';
import { startNotificationDelivery, type NotificationDelivery } from '../../engine/notify/start-notification-delivery.ts';
import { MailMessageSchema } from '../../persistence/entities/mail-message.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { useOneSite } from '../support/one-site.ts';
import { recording, type Sent } from '../support/pg-recording.ts';
import { waitFor } from '../support/wait-for.ts';

// The answer to a reset request must not tell whether the email has an account: not by its body, nor by its time.
// The request does the same database work for either (it queues the request), the worker the rest.

const site = useOneSite();
let delivery: NotificationDelivery | undefined;
afterAll(() => delivery?.close());

/** A transaction bound to the platform: a background pass, not a request from a site's host. */
const platformBound = (transaction: string[]) => transaction.some((text) => text.includes("set_config('app.platform', 'on'"));

/** The statements of the transactions begun while `work` ran, but for the platform's background passes (relays, sweeps). */
function requestStatements(sent: Sent[]): string[] {
  const open = new Map<object, string[]>();
  const transactions: string[][] = [];
  for (const { connection, text } of sent) {
    if (text.startsWith('begin')) {
      const transaction: string[] = [];
      open.set(connection, transaction);
      transactions.push(transaction);
    }
    open.get(connection)?.push(text);
  }
  return transactions.filter((transaction) => !platformBound(transaction)).flat();
}

async function resetRequest(email: string) {
  let response: { status: number; body: unknown } | undefined;
  const sent = await recording(async () => {
    response = await site.server.client('acme').post('/api/auth/password/reset', { email });
  });
  return { ...response!, statements: requestStatements(sent) };
}

const mailsTo = (recipient: string) => inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) => em.find(MailMessageSchema, { recipient }));

it('does the same database work for a known and an unknown email, and mails the known one only', async () => {
  const known = site.acme.users.customer.email;
  const unknown = 'nobody@acme.example';
  // The first request of each kind may prepare its statements: the next ones are counted.
  await resetRequest(known);
  await resetRequest(unknown);
  const [forKnown, forUnknown] = [await resetRequest(known), await resetRequest(unknown)];
  expect(forKnown.status).toBe(202);
  expect(forUnknown.status).toBe(202);
  expect(forKnown.body).toEqual(forUnknown.body);
  expect(forKnown.statements).toHaveLength(forUnknown.statements.length);

  // The worker mails the link of each request of the known email, none to the unknown one.
  delivery = await startNotificationDelivery(site.server.services, { pollIntervalMs: 50 });
  const mails = await waitFor('the two reset mails', async () => {
    const found = await mailsTo(known);
    return found.length === 2 ? found : null;
  });
  expect(mails.every((mail) => /dtk_/.test(mail.body))).toBe(true);
  expect(await mailsTo(unknown)).toEqual([]);
});
