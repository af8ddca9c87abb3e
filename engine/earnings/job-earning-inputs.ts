import type { EntityManager } from '@mikro-orm/postgresql';
import type { MappingProvider, TransportMode } from '../mapping/mapping-provider.ts';
import type { EarningInputs } from './compute-earning.ts';

type StopRow = { id: string; lat: number; lng: number };
type StateChangeRow = { entity_id: string; phase: string; created_at: Date };

/** The path a completed job's driver is paid for: its stops in order, by the mode of the route's vehicle. */
export type PaidPath = { waypoints: { lat: number; lng: number }[]; mode: TransportMode };

/**
 * Measures a completed job for its driver's pay, from what the engine recorded, all but its distance (`distanceOf`
 * measures the returned path with the site's mapping provider, outside any transaction: it may be a network call).
 * Stops and the path count the job's stops that were not cancelled:
 * - price: the service type's base price plus the prices of the job's options;
 * - duration: from the job's first move into progress (else its dispatch) to its completion;
 * - wait: at each completed stop, from the move into the state it was completed from (arrived, loading, ...) to
 *   the completion, when that state was an in-progress one: the time the driver spent there.
 * Moves come from the audit log, which holds every transition with its time in the same transaction.
 */
export async function jobEarningFacts(em: EntityManager, jobId: string): Promise<{ inputs: Omit<EarningInputs, 'distanceMeters'>; completedAt: Date; path: PaidPath }> {
  const [job] = await em.execute<{ completed_at: Date | null; service_type_id: string | null; option_ids: string[]; mode: string | null }[]>(
    `select j.completed_at, j.service_type_id, j.option_ids, v.type as mode
       from job j left join route r on r.id = j.route_id left join vehicle v on v.id = r.vehicle_id
      where j.id = ?`,
    [jobId],
  );
  if (!job) throw new Error(`job ${jobId} not found for its earning`);
  // A cancelled stop was never driven to: it is neither a stop paid for nor a waypoint of the distance paid.
  const stops = await em.execute<StopRow[]>(
    `select s.id, a.lat, a.lng from stop s join address a on a.id = s.address_id
      where s.job_id = ? and s.phase <> 'cancelled' order by s.sort_order, s.id`,
    [jobId],
  );
  const moves = await em.execute<StateChangeRow[]>(
    `select entity_id, new_data->>'phase' as phase, created_at from audit_record
      where action = 'state_change' and (entity_id = ? or entity_id in (select id from stop where job_id = ?))
      order by created_at, id`,
    [jobId, jobId],
  );
  const vehicle = job.mode;
  return {
    completedAt: job.completed_at ? new Date(job.completed_at) : new Date(),
    inputs: {
      priceCents: await jobPriceCents(em, jobId, job.service_type_id, job.option_ids),
      durationSeconds: jobDuration(moves.filter((m) => m.entity_id === jobId)),
      stopCount: stops.length,
      waitSeconds: stops.reduce((sum, stop) => sum + timeAtStop(moves.filter((m) => m.entity_id === stop.id)), 0),
    },
    path: {
      waypoints: stops.map((s) => ({ lat: s.lat, lng: s.lng })),
      mode: vehicle === 'bike' || vehicle === 'cargo_bike' ? 'bike' : vehicle === 'on_foot' ? 'on_foot' : 'car',
    },
  };
}

/** The road distance of a paid path, in meters (none for fewer than two stops). */
export async function distanceOf(mapping: MappingProvider, path: PaidPath): Promise<number> {
  if (path.waypoints.length < 2) return 0;
  return (await mapping.route({ waypoints: path.waypoints, mode: path.mode })).distance_meters;
}

/**
 * The job's price: its service type's base price and its options' prices, those in the site's currency only. A
 * service type or option priced in another currency (its own `currency`, or the site's changed since) is left out
 * rather than added as if it were the same money, and the earning is stamped with the site's currency.
 */
async function jobPriceCents(em: EntityManager, jobId: string, serviceTypeId: string | null, optionIds: string[]): Promise<number> {
  const [row] = await em.execute<{ base: string | null; extras: string | null }[]>(
    `select (select t.base_price_cents from service_type t where t.id = ? and coalesce(t.currency, s.currency) = s.currency) as base,
            (select sum(o.price_cents) from job_option o where o.id = any(?::text[]) and coalesce(o.currency, s.currency) = s.currency) as extras
       from job j join site s on s.id = j.site_id where j.id = ?`,
    [serviceTypeId, `{${optionIds.map((id) => `"${id}"`).join(',')}}`, jobId],
  );
  return Number(row?.base ?? 0) + Number(row?.extras ?? 0);
}

/** Both ends from the audit log, so they come from one clock. */
function jobDuration(jobMoves: StateChangeRow[]): number {
  const started = jobMoves.find((m) => m.phase === 'in_progress') ?? jobMoves.find((m) => m.phase === 'assigned');
  const completed = jobMoves.find((m) => m.phase === 'completed');
  if (!started || !completed) return 0;
  return Math.max(0, Math.round((new Date(completed.created_at).getTime() - new Date(started.created_at).getTime()) / 1000));
}

function timeAtStop(stopMoves: StateChangeRow[]): number {
  const done = stopMoves.findIndex((m) => m.phase === 'completed');
  if (done < 1 || stopMoves[done - 1]!.phase !== 'in_progress') return 0;
  return Math.max(0, Math.round((new Date(stopMoves[done]!.created_at).getTime() - new Date(stopMoves[done - 1]!.created_at).getTime()) / 1000));
}
