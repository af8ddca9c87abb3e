import pLimit from 'p-limit';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { DurableQueue, JobHandler } from '../queue/durable-queue.ts';
import { WebhookDeliverySchema } from '../../persistence/entities/webhook-delivery.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { deactivateSubscription, type DeactivationReason } from './deactivate.ts';
import { attemptRecord, clearRetryDue, settleAndRead, type AttemptRecord, type DeliveryTarget, type LedgerRequest, type TargetRequest } from './delivery-records.ts';
import { BATCH_JOB_NAME, batchDeliveries, enqueueDelivery, readDeliveryBatchJob, readDeliveryJob, type DeliveryJobData } from './delivery-job.ts';
import type { DeliveryClaims } from './delivery-claims.ts';
import { nextDelayMs, type RetryPolicy } from './retry-policy.ts';
import { signatureHeaders } from './signing.ts';
import { createSiteBatcher } from './site-batcher.ts';
import type { PostResult, WebhookClient } from './webhook-client.ts';

export type DeliveryDeps = {
  orm: MikroORM;
  queue: DurableQueue;
  crypto: FieldCrypto;
  client: WebhookClient;
  /** Stamps `deactivated_at` (the engine's clock; signature timestamps and `queued_at` are wall time). */
  clock: Clock;
  logger: Logger;
  retry: RetryPolicy;
  /** Jitter source, in [0, 1). */
  random?: () => number;
  /** Which batch job sends each event (delivery-claims.ts). */
  claims: DeliveryClaims;
  /** POSTs in flight at once in this process. */
  maxPosts: number;
};

type Verdict = { status: 'succeeded' | 'failed' | 'abandoned'; deactivate: DeactivationReason | null; retryInMs: number | null };

/**
 * The handler of the `webhooks` queue. A batch job (the relay's fan-out: the first attempts of a batch's events to
 * one subscription) first claims its events (delivery-claims.ts: an event carried by two batch jobs is sent by one),
 * then runs one attempt per event, all at once (POSTs capped per process by {@link DeliveryDeps.maxPosts}); any
 * other job is one attempt of one event (a retry, a ping). One attempt:
 *
 * 1. Bound to the event's site: skip if the event already reached a final state for this subscription (a run
 *    repeated after a crash); drop it (recorded `abandoned`) if the subscription is inactive or was deactivated
 *    after the event was queued, so a reactivation never replays it; decrypt the secret.
 * 2. POST the stored body with its signatures (no transaction is held during the request).
 * 3. Record the attempt (`webhook_delivery`) and, in the same transaction, schedule the next attempt (its own
 *    single-event job) or deactivate: 404, 410 and an unknown host (ENOTFOUND: NXDOMAIN or no address; never
 *    EAI_AGAIN) deactivate at once; any other failure is retried on the policy and deactivates once the attempts are
 *    used up.
 *
 * Steps 1 and 3 of the attempts running at the same time for one site share one statement sent in one round trip
 * (site-batcher.ts, delivery-records.ts); an attempt that retries or deactivates is recorded on its own. A job
 * completes only once the records of all its attempts have committed. Delivery is at least once: a crash between a
 * POST and step 3 sends that event again with the same `webhook-id`.
 */
export function createDeliveryHandler(deps: DeliveryDeps): JobHandler {
  const ledger = createSiteBatcher<LedgerRequest, DeliveryTarget | null>((siteId, requests) => settleAndRead(deps.orm, siteId, requests));
  const records = async (siteId: string, attempt: AttemptRecord): Promise<void> => void (await ledger(siteId, { record: attempt }));
  const targets = async (siteId: string, read: TargetRequest): Promise<DeliveryTarget> => (await ledger(siteId, { read }))!;
  const secrets = createSecretCache(deps.crypto);
  // POSTs in flight in this process: a batch job starts all its events at once; past the cap they wait here, before
  // their request exists, so a request's timeout counts from when it is sent, not from when it was queued.
  const slots = pLimit(deps.maxPosts);

  const read = (delivery: DeliveryJobData, rerun: boolean): Promise<DeliveryTarget> =>
    targets(delivery.site_id, {
      subscriptionId: delivery.subscription_id,
      eventId: delivery.event_id,
      since: delivery.ping ? null : delivery.queued_at,
      // Only a job run before (its process died, or it threw after recording), or one the queue sweeper added again
      // after Redis lost it (with its claims), may find its event already settled or this attempt already made.
      rerun: rerun || delivery.resumed === true,
      attempt: delivery.attempt,
    });

  /**
   * One attempt. In a batch, `shared` is the target already read for all its events (on a first run nothing can be
   * settled yet), and once one of its attempts deactivates the subscription its events still waiting for a POST slot
   * are dropped rather than sent, as separate jobs would have been.
   */
  const attempt = async (delivery: DeliveryJobData, rerun: boolean, batch?: BatchRun): Promise<void> => {
    const target = batch?.shared ?? (await read(delivery, rerun));
    if (target.kind === 'gone' || target.kind === 'settled') return;
    if (target.kind === 'dropped') {
      await records(delivery.site_id, attemptRecord(delivery, { status: 'abandoned', responseStatus: null, durationMs: 0, error: target.error }));
      return;
    }
    const secret = target.secretCiphertext ? secrets(delivery.site_id, delivery.subscription_id, target.secretCiphertext) : null;
    const body = Buffer.from(delivery.body, 'utf8');
    let settleSwitchOff: ((deactivated: boolean) => void) | undefined;
    const result = await slots(async () => {
      if (batch?.switchingOff) return null;
      const posted = await deps.client.post(target.url, body, { ...signatureHeaders(secret, delivery.event_id, Math.floor(Date.now() / 1000), body) });
      // Before the slot passes on, so the batch's next event already waits for it (a batch's attempts are first
      // attempts: only a permanent failure deactivates).
      if (batch && permanentFailure(posted)) batch.switchingOff = new Promise((resolve) => (settleSwitchOff = resolve));
      return posted;
    });
    if (!result) {
      // Dropped only once the deactivation committed; if it did not, the job runs again and sends this event then.
      if (!(await batch!.switchingOff)) throw new Error(`the delivery that deactivates subscription ${delivery.subscription_id} was not recorded`);
      await records(delivery.site_id, attemptRecord(delivery, { status: 'abandoned', responseStatus: null, durationMs: 0, error: SWITCHED_OFF_IN_BATCH }));
      return;
    }
    let deactivated = false;
    try {
      const verdict = judge(deps, delivery, result);
      const outcome = attemptRecord(delivery, {
        status: verdict.status,
        responseStatus: result.kind === 'response' ? result.status : null,
        durationMs: result.durationMs,
        error: describeFailure(result),
      });
      if (verdict.retryInMs === null && !verdict.deactivate) {
        await records(delivery.site_id, outcome);
        return;
      }
      deactivated = await inTenantScope(deps.orm, { siteId: delivery.site_id }, (em) => record(em, deps, delivery, outcome, verdict));
      if (deactivated) {
        deps.logger.warn({ subscriptionId: delivery.subscription_id, reason: verdict.deactivate }, 'webhook subscription deactivated');
      }
    } finally {
      settleSwitchOff?.(deactivated);
    }
  };

  return async (job) => {
    const rerun = job.attempt > 1;
    if (job.name !== BATCH_JOB_NAME) return attempt(readDeliveryJob(job.data), rerun);
    const batch = readDeliveryBatchJob(job.data);
    const owned = await deps.claims(job.id, batch.subscription_id, batch.events.map((event) => event.event_id));
    const deliveries = batchDeliveries(batch).filter((d) => owned.has(d.event_id));
    if (deliveries.length === 0) return;
    // Every event of a batch has the same subscription and queued_at: on a first run one read answers for all.
    const batchRun: BatchRun = rerun || batch.resumed ? {} : { shared: await read(deliveries[0]!, false) };
    const runs = await Promise.allSettled(deliveries.map((d) => attempt(d, rerun, batchRun)));
    // Every attempt has finished (or failed) before the job does: a rerun then skips the events already settled.
    const failed = runs.find((run) => run.status === 'rejected');
    if (failed) throw failed.reason;
  };
}

const SWITCHED_OFF_IN_BATCH = 'dropped: another delivery of its batch deactivated the subscription';

/**
 * A batch job's run: the target read once for all its events (first runs), and, once one of its POSTs failed for
 * good, the deactivation it leads to (true once committed), which the events still waiting for a slot wait for.
 */
type BatchRun = { shared?: DeliveryTarget; switchingOff?: Promise<boolean> };

/**
 * Decrypted signing secrets by site, subscription and ciphertext: a subscription's deliveries decrypt its secret once
 * rather than once each. Exact, not a TTL: a rotated secret has a new ciphertext (a new IV each time), so a new key.
 * Bounded: cleared when it reaches {@link SECRET_CACHE_SIZE} entries.
 */
function createSecretCache(crypto: FieldCrypto): (siteId: string, subscriptionId: string, ciphertext: string) => string {
  const secrets = new Map<string, string>();
  return (siteId, subscriptionId, ciphertext) => {
    const key = `${siteId}|${subscriptionId}|${ciphertext}`;
    let secret = secrets.get(key);
    if (secret === undefined) {
      secret = crypto.decrypt(ciphertext, { siteId, table: 'webhook_subscription', column: 'secret_ciphertext', rowId: subscriptionId });
      if (secrets.size >= SECRET_CACHE_SIZE) secrets.clear();
      secrets.set(key, secret);
    }
    return secret;
  };
}

const SECRET_CACHE_SIZE = 10_000;

function judge(deps: DeliveryDeps, delivery: DeliveryJobData, result: PostResult): Verdict {
  if (result.kind === 'response' && result.status >= 200 && result.status < 300) return { status: 'succeeded', deactivate: null, retryInMs: null };
  // A ping is a one-off check of the endpoint: it is not retried and does not switch the subscription off.
  if (delivery.ping) return { status: 'abandoned', deactivate: null, retryInMs: null };
  // The receiver refuses this body's size: no retry will change it, and it says nothing about the endpoint itself,
  // so this event is given up (in the delivery log) and the subscription goes on with the others.
  if (result.kind === 'response' && result.status === 413) return { status: 'abandoned', deactivate: null, retryInMs: null };
  const permanent = permanentFailure(result);
  if (permanent) return { status: 'abandoned', deactivate: permanent, retryInMs: null };
  if (delivery.attempt >= deps.retry.maxAttempts) return { status: 'abandoned', deactivate: 'retries_exhausted', retryInMs: null };
  const retryAfterMs = result.kind === 'response' ? result.retryAfterMs : null;
  return { status: 'failed', deactivate: null, retryInMs: nextDelayMs(deps.retry, delivery.attempt, retryAfterMs, deps.random) };
}

/** The failures that mean the endpoint is gone, not down. */
function permanentFailure(result: PostResult): DeactivationReason | null {
  if (result.kind === 'response') return result.status === 404 ? 'http_404' : result.status === 410 ? 'http_410' : null;
  return result.code === 'ENOTFOUND' ? 'unresolvable_host' : null;
}

/** A failure that retries or deactivates: its record, the next attempt and the deactivation commit together. @returns whether this attempt deactivated the subscription */
async function record(em: EntityManager, deps: DeliveryDeps, delivery: DeliveryJobData, outcome: AttemptRecord, verdict: Verdict): Promise<boolean> {
  // The retry's due time is the ledger's record of it, for the queue sweeper (retry-sweep.ts) if Redis loses its job.
  const retryDueAt = verdict.retryInMs === null ? null : new Date(Date.now() + verdict.retryInMs);
  em.create(WebhookDeliverySchema, { ...outcome, retryDueAt });
  await em.flush();
  const cleared = clearRetryDue([outcome]);
  if (cleared) await em.execute(cleared);
  if (verdict.retryInMs !== null) {
    await enqueueDelivery(deps.queue, { ...delivery, attempt: delivery.attempt + 1 }, { delayMs: verdict.retryInMs, transaction: em });
  }
  if (!verdict.deactivate) return false;
  const requestId = `webhook.${delivery.event_id}`;
  return deactivateSubscription(em, { siteId: delivery.site_id, subscriptionId: delivery.subscription_id, reason: verdict.deactivate, now: deps.clock.now(), requestId });
}

function describeFailure(result: PostResult): string | null {
  if (result.kind === 'error') return `${result.code}: ${result.message}`;
  if (result.status >= 200 && result.status < 300) return null;
  return `HTTP ${result.status}`;
}
