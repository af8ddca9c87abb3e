import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import type { SiteStrategy } from './dispatch-types.ts';

export type DispatchSettings = { site_id: string; strategy: SiteStrategy; auto_dispatch: boolean; updated_at: string | null };

type Row = { site_id: string; strategy: SiteStrategy; auto_dispatch: boolean; updated_at: Date };

/** A site that never saved settings runs load-balanced, without auto dispatch. */
export const DEFAULT_SETTINGS = { strategy: 'load-balanced', auto_dispatch: false } as const;

export async function getDispatchSettings(em: EntityManager, siteId: string): Promise<DispatchSettings> {
  const [row] = await em.execute<Row[]>('select * from dispatch_settings where site_id = ?', [siteId]);
  return row ? toSettings(row) : { site_id: siteId, ...DEFAULT_SETTINGS, updated_at: null };
}

/**
 * Changes the given settings (an omitted one stays), audited. The row is read `for update` (the audit's `before`
 * is the row this change replaces) and the upsert writes only the fields given, so two changes of different fields
 * at the same time both stay, including the first two of a site (the second upsert finds the first's row).
 */
export async function updateDispatchSettings(
  em: EntityManager,
  actor: AuditActor,
  siteId: string,
  patch: { strategy?: SiteStrategy; auto_dispatch?: boolean },
): Promise<DispatchSettings> {
  const [locked] = await em.execute<Row[]>('select * from dispatch_settings where site_id = ? for update', [siteId]);
  const before = locked ? toSettings(locked) : { site_id: siteId, ...DEFAULT_SETTINGS, updated_at: null };
  const strategy = patch.strategy ?? null;
  const autoDispatch = patch.auto_dispatch ?? null;
  const now = new Date();
  const [row] = await em.execute<Row[]>(
    `insert into dispatch_settings (site_id, strategy, auto_dispatch, created_at, updated_at) values (?, coalesce(?::text, ?), coalesce(?::boolean, ?), ?, ?)
     on conflict (site_id) do update set strategy = coalesce(?::text, dispatch_settings.strategy), auto_dispatch = coalesce(?::boolean, dispatch_settings.auto_dispatch),
       updated_at = excluded.updated_at
     returning *`,
    [siteId, strategy, DEFAULT_SETTINGS.strategy, autoDispatch, DEFAULT_SETTINGS.auto_dispatch, now, now, strategy, autoDispatch],
  );
  const after = toSettings(row!);
  recordAudit(em, actor, {
    siteId,
    action: 'update',
    entityType: 'DispatchSettings',
    entityId: siteId,
    before: { strategy: before.strategy, auto_dispatch: before.auto_dispatch },
    after: { strategy: after.strategy, auto_dispatch: after.auto_dispatch },
  });
  return after;
}

const toSettings = (row: Row): DispatchSettings => ({
  site_id: row.site_id,
  strategy: row.strategy,
  auto_dispatch: row.auto_dispatch,
  updated_at: new Date(row.updated_at).toISOString(),
});
