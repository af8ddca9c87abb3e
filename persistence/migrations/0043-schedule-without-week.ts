import { Migration } from '@mikro-orm/migrations';

/**
 * A worker schedule may restrict dated exceptions only: `weekly` null means no weekday is restricted (the worker is
 * on at any time, but on the days an exception names), where an empty week means never on outside the exceptions.
 * Without it, a day off added to a worker who had no schedule (read as an empty week) took them off every day.
 */
export class ScheduleWithoutWeek0043 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table worker_schedule alter column weekly drop not null;');
  }
}
