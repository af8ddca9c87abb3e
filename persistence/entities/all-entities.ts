import { AccessTokenSchema } from './access-token.entity.ts';
import { AddressSchema } from './address.entity.ts';
import { ApplicationSchema } from './application.entity.ts';
import { AuditRecordSchema } from './audit-record.entity.ts';
import { AuthTicketSchema } from './auth-ticket.entity.ts';
import { MailMessageSchema } from './mail-message.entity.ts';
import { OptionSchema } from './option.entity.ts';
import { JobSchema } from './job.entity.ts';
import { StopSchema } from './stop.entity.ts';
import { WebhookDeliverySchema } from './webhook-delivery.entity.ts';
import { WebhookSubscriptionSchema } from './webhook-subscription.entity.ts';
import { WorkflowSchema } from './workflow.entity.ts';
import { OutboxMessageSchema } from './outbox-message.entity.ts';
import { OrganizationSchema } from './organization.entity.ts';
import { RefreshTokenSchema } from './refresh-token.entity.ts';
import { ServiceTypeSchema } from './service-type.entity.ts';
import { SiteSchema } from './site.entity.ts';
import { TeamSchema } from './team.entity.ts';
import { UserProfileSchema } from './user-profile.entity.ts';
import { UserSchema } from './user.entity.ts';
import { WorkerScheduleSchema } from './worker-schedule.entity.ts';
import { WorkerSchema } from './worker.entity.ts';
import { VehicleSchema } from './vehicle.entity.ts';
import { ZoneSchema } from './zone.entity.ts';
import { RouteSchema, RouteStopSchema } from './route.entity.ts';
import { AttachmentSchema, JobAttachmentSchema } from './attachment.entity.ts';
import { CustomFieldDefinitionSchema } from './custom-field-definition.entity.ts';
import { SiteBrandingSchema } from './site-branding.entity.ts';
import { TrackPointSchema } from './track-point.entity.ts';
import { NotificationMessageSchema } from './notification-message.entity.ts';
import { PaymentMethodSchema } from './payment-method.entity.ts';
import { SiteIntegrationSchema } from './site-integration.entity.ts';
import { DriverEarningSchema } from './driver-earning.entity.ts';
import { EarningsRuleSchema } from './earnings-rule.entity.ts';
import { EtaNotificationConfigSchema } from './eta-notification-config.entity.ts';
import { EtaNotificationSentSchema } from './eta-notification-sent.entity.ts';
import { ChatMessageSchema, ChatParticipantSchema, ChatRoomSchema } from './chat.entity.ts';

/** The ORM's entity list (explicit: no folder discovery, which breaks under tsx on Node 20). */
export const ALL_ENTITIES = [
  OrganizationSchema,
  SiteSchema,
  UserSchema,
  UserProfileSchema,
  ApplicationSchema,
  AddressSchema,
  AccessTokenSchema,
  RefreshTokenSchema,
  AuthTicketSchema,
  MailMessageSchema,
  AuditRecordSchema,
  OutboxMessageSchema,
  ServiceTypeSchema,
  OptionSchema,
  WorkflowSchema,
  JobSchema,
  StopSchema,
  WebhookSubscriptionSchema,
  WebhookDeliverySchema,
  VehicleSchema,
  TeamSchema,
  ZoneSchema,
  WorkerSchema,
  WorkerScheduleSchema,
  RouteSchema,
  RouteStopSchema,
  CustomFieldDefinitionSchema,
  AttachmentSchema,
  JobAttachmentSchema,
  SiteBrandingSchema,
  TrackPointSchema,
  SiteIntegrationSchema,
  NotificationMessageSchema,
  PaymentMethodSchema,
  EarningsRuleSchema,
  DriverEarningSchema,
  ChatRoomSchema,
  ChatParticipantSchema,
  ChatMessageSchema,
  EtaNotificationConfigSchema,
  EtaNotificationSentSchema,
];
