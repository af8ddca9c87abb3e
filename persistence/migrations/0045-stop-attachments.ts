import { Migration } from '@mikro-orm/migrations';

/**
 * `job_attachment.stop_id`: the stop of the job an attachment is linked to (null: the job as a whole). A stop move
 * that requires an attachment is met only by one linked to that stop (a pickup's photo is not the dropoff's proof).
 * The partial index serves that check, which looks links up by stop.
 */
export class StopAttachments0045 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table job_attachment add column stop_id text references stop(id) deferrable initially deferred;
create index job_attachment_stop_idx on job_attachment (stop_id) where stop_id is not null;
`);
  }
}
