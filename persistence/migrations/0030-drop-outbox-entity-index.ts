import { Migration } from '@mikro-orm/migrations';

/**
 * Drops `outbox_entity_idx (site_id, entity_id, seq)` (migration 0002): no statement of the app reads the outbox by
 * entity (the relay reads by `seq`; an entity's events reach consumers through the queues and realtime feed), and
 * each job command paid two inserts into it (two outbox rows; bench:engine, issue 3). The outbox's only index is now
 * its key, `seq` (migration 0029).
 */
export class DropOutboxEntityIndex0030 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index outbox_entity_idx;`);
  }
}
