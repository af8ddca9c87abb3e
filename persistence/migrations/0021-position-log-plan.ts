import { Migration } from '@mikro-orm/migrations';

/**
 * The position log's trigger (migration 0020) planned once per connection, not per statement: PL/pgSQL keeps the plan
 * of a query without parameters for the whole session, made with the transition tables' sizes of its FIRST run. A
 * connection whose first write to `driver_state` updated no row or a few (a new driver's first fix is an insert) kept
 * a nested loop joining `new_rows` to `old_rows`, so a later statement updating N drivers compared N × N rows: a
 * 2,000-fix batch took ~700 ms of PostgreSQL CPU instead of ~100 (measured on one connection, first a one-fix insert
 * then 2,000-fix updates: 330–390 µs per fix against 45–55). Under load the slow batches made the next ones bigger,
 * and the location path's p99 followed. Without nested loops the planner joins by hash (or merge): linear whatever
 * the first run saw. The function's meaning (which drivers a statement moved, logged once per statement) is unchanged.
 */
export class PositionLogPlan0021 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter function log_position_changes() set enable_nestloop = off;`);
  }
}
