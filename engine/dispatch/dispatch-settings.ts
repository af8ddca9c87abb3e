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

/** Changes the given settings (an omitted one stays), audited. */
export async function updateDispatchSettings(
  em: EntityManager,
  actor: AuditActor,
  siteId: string,
  patch: { strategy?: SiteStrategy; auto_dispatch?: boolean },
): Promise<DispatchSettings> {
  const before = await getDispatchSettings(em, siteId);
  const next = { strategy: patch.strategy ?? before.strategy, auto_dispatch: patch.auto_dispatch ?? before.auto_dispatch };
  const now = new Date();
  const [row] = await em.execute<Row[]>(
    `insert into dispatch_settings (site_id, strategy, auto_dispatch, created_at, updated_at) values (?, ?, ?, ?, ?)
     on conflict (site_id) do update set strategy = excluded.strategy, auto_dispatch = excluded.auto_dispatch, updated_at = excluded.updated_at
     returning *`,
    [siteId, next.strategy, next.auto_dispatch, now, now],
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
