import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox's primary key is its `seq` (the unique index the relay already reads rows by), and the text `id` loses
 * its own unique index: each job command writes two outbox rows, and that index cost two more index inserts per
 * command (bench:engine, issue 3). No statement looks a row up by `id`: the relay reads by `seq`, the consumers get
 * the id in the queued job (its job id, which dedupes a re-sent row) and in the envelope, and webhook deliveries keep
 * it as their `event_id` without a foreign key. Ids are ULIDs made by `newId('outbox')`, unique without the index.
 */
export class OutboxSeqKey0029 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table outbox drop constraint outbox_pkey;
alter table outbox add constraint outbox_pkey primary key using index outbox_seq_idx;`);
  }
}
