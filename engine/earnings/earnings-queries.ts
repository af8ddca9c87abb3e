import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { DriverEarningSchema, type DriverEarning } from '../../persistence/entities/driver-earning.entity.ts';
import { SiteSchema } from '../../persistence/entities/site.entity.ts';
import { DomainError } from '../domain-error.ts';

/** Who asks: drivers see their own earnings only, whatever filter they pass. */
export type EarningsViewer = { role: string; userId: string | null };

export type EarningsFilter = { driver_user_id?: string; job_id?: string; earned_at_start?: string; earned_at_end?: string };

export type EarningsTotals = { job_count: number; total_amount_cents: number; total_cents: number; total_tip_cents: number };

export const PERIODS = ['day', 'week', 'month'] as const;
export type Period = (typeof PERIODS)[number];

/** Labels of the periods in the site's time zone: 2026-11-21, ISO week 2026-W47, 2026-11. */
const PERIOD_LABEL: Record<Period, string> = { day: 'YYYY-MM-DD', week: 'IYYY-"W"IW', month: 'YYYY-MM' };

export async function searchEarnings(
  em: EntityManager,
  viewer: EarningsViewer,
  filter: EarningsFilter,
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[DriverEarning[], number]> {
  return em.findAndCount(DriverEarningSchema, ormWhere(viewer, filter), page);
}

/** Totals per driver over the filter (most earned first; ties by driver id). */
export async function earningsSummary(em: EntityManager, viewer: EarningsViewer, siteId: string, filter: EarningsFilter): Promise<(EarningsTotals & { driver_user_id: string })[]> {
  const { sql, params } = sqlWhere(viewer, siteId, filter);
  const rows = await em.execute<Record<string, string>[]>(
    `select driver_user_id, ${TOTALS} from driver_earning where ${sql} group by driver_user_id order by sum(total_amount_cents) desc, driver_user_id`,
    params,
  );
  return rows.map((row) => ({ driver_user_id: row.driver_user_id!, ...totals(row) }));
}

/** Totals per day, ISO week or month of the site's time zone, oldest first; periods without earnings are left out. */
export async function earningsTimeSeries(em: EntityManager, viewer: EarningsViewer, siteId: string, period: Period, filter: EarningsFilter): Promise<(EarningsTotals & { period: string })[]> {
  const site = await em.findOneOrFail(SiteSchema, { id: siteId });
  const { sql, params } = sqlWhere(viewer, siteId, filter);
  const local = `(earned_at at time zone ?)`;
  const rows = await em.execute<Record<string, string>[]>(
    `select to_char(date_trunc('${period}', ${local}), '${PERIOD_LABEL[period]}') as period, ${TOTALS}
       from driver_earning where ${sql} group by 1 order by 1`,
    [site.timezone, ...params],
  );
  return rows.map((row) => ({ period: row.period!, ...totals(row) }));
}

/** The largest amount an earning's columns hold (PostgreSQL integer). */
const MAX_CENTS = 2_147_483_647;

/**
 * Adds a tip to a job's earning (tips accumulate; the total is amount + tips).
 * @throws DomainError 404 when the job has no earning (not completed, no default rule, or another site's), 400 AMOUNT_TOO_LARGE
 */
export async function addTip(em: EntityManager, actor: AuditActor, siteId: string, jobId: string, amountCents: number): Promise<DriverEarning> {
  // Locked: two tips at once both count (read, added and written in turn, not over each other).
  const earning = await em.findOne(DriverEarningSchema, { jobId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!earning) throw new DomainError(404, 'NOT_FOUND', `No earning for job ${jobId}: tips go to completed jobs with an earning`, 'job_id');
  // The amounts are 32-bit integers: past that the write would fail (a 500).
  if (earning.amountCents + earning.tipAmountCents + amountCents > MAX_CENTS) {
    throw DomainError.invalid('AMOUNT_TOO_LARGE', `The earning's total would pass ${MAX_CENTS} cents`, 'amount_cents');
  }
  const before = { tip_amount_cents: earning.tipAmountCents, total_amount_cents: earning.totalAmountCents };
  earning.tipAmountCents += amountCents;
  earning.totalAmountCents = earning.amountCents + earning.tipAmountCents;
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'DriverEarning', entityId: earning.id, before, after: { tip_amount_cents: earning.tipAmountCents, total_amount_cents: earning.totalAmountCents } });
  await em.flush();
  return earning;
}

const TOTALS = `count(*) as job_count, coalesce(sum(amount_cents), 0) as total_amount_cents,
  coalesce(sum(total_amount_cents), 0) as total_cents, coalesce(sum(tip_amount_cents), 0) as total_tip_cents`;

function totals(row: Record<string, string>): EarningsTotals {
  return {
    job_count: Number(row.job_count),
    total_amount_cents: Number(row.total_amount_cents),
    total_cents: Number(row.total_cents),
    total_tip_cents: Number(row.total_tip_cents),
  };
}

function driverOf(viewer: EarningsViewer, filter: EarningsFilter): string | undefined {
  return viewer.role === 'driver' ? (viewer.userId ?? '') : filter.driver_user_id;
}

function ormWhere(viewer: EarningsViewer, filter: EarningsFilter) {
  const driver = driverOf(viewer, filter);
  const earnedAt = {
    ...(filter.earned_at_start ? { $gte: new Date(filter.earned_at_start) } : {}),
    ...(filter.earned_at_end ? { $lt: new Date(filter.earned_at_end) } : {}),
  };
  return {
    ...(driver === undefined ? {} : { driverUserId: driver }),
    ...(filter.job_id ? { jobId: filter.job_id } : {}),
    ...(Object.keys(earnedAt).length > 0 ? { earnedAt } : {}),
  };
}

/** The same filter in SQL, for the aggregates (row-level security also keeps them to the caller's site). */
function sqlWhere(viewer: EarningsViewer, siteId: string, filter: EarningsFilter): { sql: string; params: unknown[] } {
  const conditions: [string, unknown][] = [['site_id = ?', siteId]];
  const driver = driverOf(viewer, filter);
  if (driver !== undefined) conditions.push(['driver_user_id = ?', driver]);
  if (filter.job_id) conditions.push(['job_id = ?', filter.job_id]);
  if (filter.earned_at_start) conditions.push(['earned_at >= ?', new Date(filter.earned_at_start)]);
  if (filter.earned_at_end) conditions.push(['earned_at < ?', new Date(filter.earned_at_end)]);
  return { sql: conditions.map(([sql]) => sql).join(' and '), params: conditions.map(([, value]) => value) };
}
