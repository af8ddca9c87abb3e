import { Type } from 'typebox';
import { queueWebhookPing } from '../../engine/webhooks/ping.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { requireSite } from '../tenancy.ts';

const PingQueued = Type.Object(
  {
    event_id: Type.String({ description: 'the ping\'s event id: its webhook-id header and body id, and its delivery log entry' }),
    queued: Type.Literal(true),
  },
  { additionalProperties: false },
);

export const webhookTestOperations = [
  defineOperation({
    id: 'webhook.test',
    method: 'POST',
    path: '/webhook/test',
    summary: 'Send a webhook:ping to one subscription now',
    description:
      'Queues a signed webhook:ping event to the subscription named by ?id=, whatever its event filter and even when it is inactive. ' +
      'It is tried once (no retries) and never deactivates the subscription; the outcome appears in GET /webhook/deliveries.',
    tag: 'Webhooks',
    access: 'webhook.manage',
    host: 'site',
    query: IdQuery,
    status: 202,
    response: DataResponse(PingQueued),
    handler: async ({ query, site, services, transaction }) => {
      const siteId = requireSite(site).id;
      const eventId = await transaction((em) => queueWebhookPing(em, services, siteId, query.id));
      return { data: { event_id: eventId, queued: true as const } };
    },
  }),
];
