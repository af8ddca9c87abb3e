import type { MikroORM } from '@mikro-orm/postgresql';
import { inTenantRoundTrip } from '../drivers/tenant-round-trip.ts';
import { newId } from '../../persistence/ids.ts';
import type { DeliveryJobData } from './delivery-job.ts';

/**
 * The SQL of the delivery hot path: one statement per batch of concurrent deliveries of a site (see site-batcher.ts),
 * with no ORM unit of work. The attempts finished and the targets asked for since the last batch share one tenant
 * transaction sent in one round trip ({@link settleAndRead}). Failures that retry or deactivate are rarer and go through deliver.ts's ORM
 * path, which must write the retry and the deactivation with their attempt.
 */

/** One request to the site's delivery ledger: read a target before a POST, or record a final attempt after one. */
export type LedgerRequest = { read: TargetRequest } | { record: AttemptRecord };

/**
 * Runs a batch of ledger requests of one site in one tenant transaction, in one round trip (tenant-round-trip.ts:
 * the values are inlined, see {@link jsonLiteral}): the attempt records first (one insert), then the target reads (one select);
 * answers in request order (a record's answer is null). Records and reads are independent rows, so their order
 * within the transaction changes nothing a delivery can observe.
 */
export async function settleAndRead(orm: MikroORM, siteId: string, requests: LedgerRequest[]): Promise<(DeliveryTarget | null)[]> {
  const records: AttemptRecord[] = [];
  const reads: TargetRequest[] = [];
  for (const request of requests) {
    if ('record' in request) records.push(request.record);
    else reads.push(request.read);
  }
  const cleared = clearRetryDue(records);
  const rows = await inTenantRoundTrip<TargetRow>(orm, siteId, () =>
    [...(records.length > 0 ? [insertAttempts(records)] : []), ...(cleared ? [cleared] : []), ...(reads.length > 0 ? [readTargets(siteId, reads)] : [])].join(';\n'),
  );
  let next = 0;
  return requests.map((request) => {
    if ('record' in request) return null;
    const index = next++;
    return toTarget(rows[index]!, reads[index]!);
  });
}

/**
 * What one delivery asks before its POST. `since` is the job's `queued_at`, null for a ping (sent even when inactive);
 * `rerun` asks whether the event is settled or this `attempt` was already made (a job run again, or added again).
 */
export type TargetRequest = { subscriptionId: string; eventId: string; since: string | null; rerun: boolean; attempt: number };

/**
 * - `gone`: the subscription was deleted (its delivery rows went with it): nothing to send or record.
 * - `settled`: a rerun whose event already succeeded or was given up for this subscription.
 * - `dropped`: inactive, or switched off after the event was queued (so a reactivation never replays it).
 */
export type DeliveryTarget =
  | { kind: 'gone' }
  | { kind: 'settled' }
  | { kind: 'dropped'; error: string }
  | { kind: 'send'; url: string; secretCiphertext: string | null };

type TargetRow = {
  found: boolean;
  url: string | null;
  secret_ciphertext: string | null;
  is_active: boolean | null;
  deactivation_reason: string | null;
  switched_off: boolean | null;
  settled: boolean | null;
};

/**
 * The read of the subscriptions of a batch of deliveries of one site (one row per request, in request order; a
 * subscription of another site is not found, as where row-level security is not enforced: PGlite). A switch-off after `since` is found in the audit log,
 * which records every one (delivery's deactivations and the API's `is_active: false`) even when the subscription was
 * reactivated since (reactivation clears `deactivated_at`); the log is read only for rows updated after `since`,
 * which a delivery seldom meets.
 */
function readTargets(siteId: string, requests: TargetRequest[]): string {
  const items = requests.map((r) => ({ subscription_id: r.subscriptionId, event_id: r.eventId, since: r.since, rerun: r.rerun, attempt: r.attempt }));
  return `select s.id is not null as found, s.url, s.secret_ciphertext, s.is_active, s.deactivation_reason,
         (q.since is not null and s.updated_at > q.since and exists (
           select 1 from audit_record a
           where a.site_id = s.site_id and a.entity_type = 'Webhook' and a.entity_id = s.id and a.created_at > q.since
             and a.new_data->>'is_active' = 'false')) as switched_off,
         (q.rerun and exists (
           select 1 from webhook_delivery d
           where d.subscription_id = q.subscription_id and d.event_id = q.event_id
             and (d.status in ('succeeded', 'abandoned') or d.attempt >= q.attempt))) as settled
       from (select r.ord, r.item->>'subscription_id' as subscription_id, r.item->>'event_id' as event_id,
               (r.item->>'since')::timestamptz as since, (r.item->>'rerun')::boolean as rerun, (r.item->>'attempt')::int as attempt
             from jsonb_array_elements(${jsonLiteral(items)}) with ordinality as r(item, ord)) q
       left join webhook_subscription s on s.id = q.subscription_id and s.site_id = (${jsonLiteral(siteId)} #>> '{}')
       order by q.ord`;
}

function toTarget(row: TargetRow, request: TargetRequest): DeliveryTarget {
  if (!row.found) return { kind: 'gone' };
  if (row.settled) return { kind: 'settled' };
  if (request.since !== null && (!row.is_active || row.switched_off)) {
    const error = row.is_active
      ? 'dropped: the subscription was deactivated after this event was queued'
      : `dropped: the subscription is deactivated (${row.deactivation_reason ?? 'inactive'})`;
    return { kind: 'dropped', error };
  }
  return { kind: 'send', url: row.url!, secretCiphertext: row.secret_ciphertext };
}

/** One row of `webhook_delivery` (the attempt log), as `GET /webhook/deliveries` shows it. */
export type AttemptRecord = {
  id: string;
  siteId: string;
  subscriptionId: string;
  eventId: string;
  event: string;
  attempt: number;
  status: 'succeeded' | 'failed' | 'abandoned';
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  createdAt: Date;
};

export type AttemptOutcome = Pick<AttemptRecord, 'status' | 'responseStatus' | 'durationMs' | 'error'>;

export function attemptRecord(delivery: DeliveryJobData, outcome: AttemptOutcome): AttemptRecord {
  return {
    id: newId('webhookDelivery'),
    siteId: delivery.site_id,
    subscriptionId: delivery.subscription_id,
    eventId: delivery.event_id,
    event: delivery.event,
    attempt: delivery.attempt,
    ...outcome,
    createdAt: new Date(),
  };
}

/**
 * The statement that writes a batch of final attempts of one site. A subscription deleted meanwhile takes its log with
 * it, so its rows are skipped rather than failing the batch on the foreign key.
 */
function insertAttempts(records: AttemptRecord[]): string {
  const rows = records.map((r) => ({
    id: r.id, site_id: r.siteId, subscription_id: r.subscriptionId, event_id: r.eventId, event: r.event, attempt: r.attempt,
    status: r.status, response_status: r.responseStatus, duration_ms: r.durationMs, error: r.error, created_at: r.createdAt.toISOString(),
  }));
  return `insert into webhook_delivery (id, site_id, subscription_id, event_id, event, attempt, status, response_status, duration_ms, error, created_at)
       select r.id, r.site_id, r.subscription_id, r.event_id, r.event, r.attempt, r.status, r.response_status, r.duration_ms, r.error, r.created_at
       from jsonb_to_recordset(${jsonLiteral(rows)}) as r(id text, site_id text, subscription_id text, event_id text, event text, attempt integer,
         status text, response_status integer, duration_ms integer, error text, created_at timestamptz)
       where exists (select 1 from webhook_subscription s where s.id = r.subscription_id)`;
}

/**
 * The statement that marks the retries of `records` as run (their earlier attempts' `retry_due_at` cleared, so the
 * queue sweeper no longer looks for their jobs), or null when none is a retry: first attempts, nearly all of them,
 * cost nothing.
 */
export function clearRetryDue(records: readonly AttemptRecord[]): string | null {
  const retries = records.filter((r) => r.attempt > 1).map((r) => ({ subscription_id: r.subscriptionId, event_id: r.eventId, attempt: r.attempt }));
  if (retries.length === 0) return null;
  return `update webhook_delivery d set retry_due_at = null
       from jsonb_to_recordset(${jsonLiteral(retries)}) as r(subscription_id text, event_id text, attempt integer)
       where d.subscription_id = r.subscription_id and d.event_id = r.event_id and d.attempt < r.attempt and d.retry_due_at is not null`;
}

/**
 * A JSON value as an SQL `jsonb` expression, inlined as base64: its alphabet needs no quoting, so nothing a body or an
 * error message holds can end the literal, and encoding is native (escaping ~40 KB of JSON character by character
 * in JavaScript cost more than the statement).
 */
function jsonLiteral(value: unknown): string {
  return `convert_from(decode('${Buffer.from(JSON.stringify(value), 'utf8').toString('base64')}', 'base64'), 'UTF8')::jsonb`;
}
