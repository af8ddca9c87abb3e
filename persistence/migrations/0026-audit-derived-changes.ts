import { Migration } from '@mikro-orm/migrations';

/**
 * An audit record may be stored without its diff (`changes` null) when the diff is exactly that of its
 * `previous_data` and `new_data` (issue 3 benchmark): the command path's moves, whose before and after are a few
 * plain values (state, phase, version, and the event and role after). The audit API derives the diff of such a
 * record and answers as before. The diff repeated every value of both (about 0.4 KB of `jsonb` per record, two
 * records per job command: a ninth of its WAL). Only the constraint changes; existing records keep their diff.
 */
export class AuditDerivedChanges0026 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table audit_record alter column changes drop not null;`);
  }
}
