import { Migration } from '@mikro-orm/migrations';

/**
 * An integration's `authorizing` status: the OAuth callback claims its state (pending_authorization → authorizing)
 * before it trades the code, so that a callback arriving twice trades it once (engine/integrations/authorize.ts).
 */
export class IntegrationAuthorizing0037 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table site_integration drop constraint site_integration_status_check;
alter table site_integration add constraint site_integration_status_check
  check (status in ('configured', 'pending_authorization', 'authorizing', 'connected'));`);
  }
}
