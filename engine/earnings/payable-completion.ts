/** The `data` of a `job:state_change` event, as far as the earnings consumer reads it. */
export type JobStateChangeData = { id?: string; phase?: string; driver_user_id?: string | null };

/**
 * Whether an outbox event is one the earnings consumer acts on: a job that reached the completed phase with a
 * driver. The relay adds only these to the earnings queue (every other move would cost a queue job the consumer
 * skips), and the consumer checks the same, so the two cannot drift apart.
 */
export function isPayableCompletion(event: string, data: unknown): data is JobStateChangeData & { id: string; driver_user_id: string } {
  if (event !== 'job:state_change' || typeof data !== 'object' || data === null) return false;
  const job = data as JobStateChangeData;
  return Boolean(job.id) && job.phase === 'completed' && Boolean(job.driver_user_id);
}
