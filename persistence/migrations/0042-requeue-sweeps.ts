import { Migration } from '@mikro-orm/migrations';

/**
 * What the requeue sweeps read (engine/dispatch/scheduled-sweep.ts, engine/notify/notification-relay.ts): scheduled
 * dispatches still pending, by due time, and notifications queued but still pending, by when they were queued. Both
 * sets are small (a row leaves it when its queue job runs), so the sweeps cost an index probe, not a table scan.
 */
export class RequeueSweeps0042 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create index dispatch_scheduled_pending_idx on dispatch (dispatch_at)
  where status = 'pending' and is_active and dispatched_at is null and plan is not null;
create index notification_message_queued_idx on notification_message (queued_at)
  where status = 'pending' and queued_at is not null;
`);
  }
}
