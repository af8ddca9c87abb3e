import type { Redis } from 'ioredis';
import { JOB_RETENTION_SECONDS } from '../queue/durable-queue.ts';

/**
 * Which batch job sends each (subscription, event). On BullMQ a relay that dies between adding a batch's jobs and
 * its commit relays the rows again, and if more rows had committed meanwhile the new batch differs from the first
 * (other job id), so two jobs carry the same events. Before its POSTs a batch job claims its events: the first job
 * to claim an event owns it for {@link CLAIM_SECONDS} (as long as a completed job id dedupes), a job sends only the
 * events it owns, and a job run again (after a crash) still owns what it claimed before.
 *
 * On the table queue the jobs commit with the relay's stamp, so no two batch jobs ever carry one event: every event
 * is its job's own.
 */
export type DeliveryClaims = (owner: string, subscriptionId: string, eventIds: readonly string[]) => Promise<Set<string>>;

const CLAIM_SECONDS = JOB_RETENTION_SECONDS.completed;

/** For each key: claim it for ARGV[1] unless taken; answer 1 when ARGV[1] holds it. One round trip per batch. */
const CLAIM_SCRIPT = `
local owned = {}
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if not holder then
    redis.call('SET', key, ARGV[1], 'EX', tonumber(ARGV[2]))
    holder = ARGV[1]
  end
  owned[i] = holder == ARGV[1] and 1 or 0
end
return owned`;

/** Claims in Redis under the deployment's prefix (BullMQ's), or none needed (`redis` null: the table queue). */
export function createDeliveryClaims(redis: Redis | null, prefix: string): DeliveryClaims {
  if (!redis) return async (_owner, _subscriptionId, eventIds) => new Set(eventIds);
  return async (owner, subscriptionId, eventIds) => {
    const keys = eventIds.map((eventId) => `${prefix}:webhook-claim:${subscriptionId}:${eventId}`);
    const owned = (await redis.eval(CLAIM_SCRIPT, keys.length, ...keys, owner, CLAIM_SECONDS)) as number[];
    return new Set(eventIds.filter((_, i) => owned[i] === 1));
  };
}
