import type { Operation } from '../operation.ts';
import { dispatchDriverOperations } from './dispatch-driver.operations.ts';
import { dispatchRouteOperations } from './dispatch-route.operations.ts';
import { dispatchOperations } from './dispatch.operations.ts';
import { jobOperations } from './job.operations.ts';
import { jobStateOperations } from './job-state.operations.ts';
import { stopOperations } from './stop.operations.ts';
import { workflowOperations } from './workflow.operations.ts';
import { addressOperations } from './address.operations.ts';
import { applicationOperations } from './application.operations.ts';
import { auditOperations } from './audit.operations.ts';
import { authOperations } from './auth.operations.ts';
import { customerOperations } from './customer.operations.ts';
import { driverJobOperations } from './driver-job.operations.ts';
import { driverRouteOperations } from './driver-route.operations.ts';
import { routeOperations } from './route.operations.ts';
import { routeOptimizeOperations } from './route-optimize.operations.ts';
import { driverOperations } from './driver.operations.ts';
import { geocodeOperations } from './geocode.operations.ts';
import { gisOperations } from './gis.operations.ts';
import { driverTrackOperations } from './driver-track.operations.ts';
import { mailboxOperations } from './mailbox.operations.ts';
import { optionOperations } from './option.operations.ts';
import { organizationOperations } from './organization.operations.ts';
import { serviceTypeOperations } from './service-type.operations.ts';
import { siteOperations } from './site.operations.ts';
import { teamOperations } from './team.operations.ts';
import { userOperations } from './user.operations.ts';
import { vehicleOperations } from './vehicle.operations.ts';
import { webhookOperations } from './webhook.operations.ts';
import { webhookTestOperations } from './webhook-test.operations.ts';
import { integrationOperations } from './integration.operations.ts';
import { outboxMessageOperations } from './outbox-message.operations.ts';
import { paymentMethodOperations } from './payment-method.operations.ts';
import { workerScheduleOperations } from './worker-schedule.operations.ts';
import { workerOperations } from './worker.operations.ts';
import { zoneOperations } from './zone.operations.ts';
import { earningsOperations } from './earnings.operations.ts';
import { etaOperations } from './eta.operations.ts';
import { attachmentOperations } from './attachment.operations.ts';
import { brandingOperations } from './branding.operations.ts';
import { customFieldOperations } from './customfield.operations.ts';
import { chatOperations } from './chat.operations.ts';

/** Every operation the API serves, in the order of the reference page. */
export const ALL_OPERATIONS: Operation[] = [
  ...authOperations,
  ...organizationOperations,
  ...siteOperations,
  ...userOperations,
  ...applicationOperations,
  ...addressOperations,
  ...customerOperations,
  ...customFieldOperations,
  ...attachmentOperations,
  ...brandingOperations,
  ...serviceTypeOperations,
  ...optionOperations,
  ...vehicleOperations,
  ...teamOperations,
  ...zoneOperations,
  ...workerOperations,
  ...workerScheduleOperations,
  ...auditOperations,
  ...mailboxOperations,
  ...workflowOperations,
  ...jobOperations,
  ...jobStateOperations,
  ...stopOperations,
  ...routeOperations,
  ...routeOptimizeOperations,
  ...driverOperations,
  ...driverTrackOperations,
  ...driverJobOperations,
  ...driverRouteOperations,
  ...webhookOperations,
  ...webhookTestOperations,
  ...integrationOperations,
  ...outboxMessageOperations,
  ...paymentMethodOperations,
  ...earningsOperations,
  ...chatOperations,
  ...etaOperations,
  ...gisOperations,
  ...geocodeOperations,
  ...dispatchOperations,
  ...dispatchRouteOperations,
  ...dispatchDriverOperations,
];
