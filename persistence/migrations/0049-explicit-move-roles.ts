import { Migration } from '@mikro-orm/migrations';

/**
 * A workflow move naming no `roles` meant every role until this release; it now means staff only (admin,
 * dispatcher), so that a move an admin adds without naming roles does not open the entity to its driver or customer.
 * Stored workflow versions keep their old meaning: each of their role-less moves is given every site role explicitly
 * (admin, dispatcher, driver, customer: the roles a workflow may name), so a custom stop workflow's role-less
 * `arrived -> completed` still lets the driver complete the stop. Versions are otherwise immutable and cached by id,
 * which is safe here: this runs before the server reads any. Versions written from now on keep what they are sent.
 * The list is written out, not taken from the code, so this migration means the same whatever the code later says.
 * The table's row-level security binds the migrating role too, so the update runs as the platform (for this
 * transaction only, restored after); on an empty database it changes nothing.
 */
export class ExplicitMoveRoles0049 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
do $$
declare
  previous text := coalesce(current_setting('app.platform', true), '');
begin
  perform set_config('app.platform', 'on', true);
  update workflow w set transitions = (
    select jsonb_agg(case when jsonb_typeof(t.move -> 'roles') = 'array' then t.move
                          else t.move || '{"roles": ["admin", "dispatcher", "driver", "customer"]}'::jsonb end
                     order by t.position)
    from jsonb_array_elements(w.transitions) with ordinality as t(move, position))
  where exists (select 1 from jsonb_array_elements(w.transitions) as t(move) where jsonb_typeof(t.move -> 'roles') is distinct from 'array');
  perform set_config('app.platform', previous, true);
end $$;
`);
  }
}
