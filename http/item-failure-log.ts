import type { OperationContext } from './operation.ts';
import { describeFailure } from './run-operation.ts';

/**
 * Logs an item of a bulk call that failed on the server's side, as a 500 would be logged (the answer lists the item
 * with code INTERNAL_ERROR and goes on with the others: engine/bulk-outcomes.ts).
 */
export function logItemFailure(ctx: Pick<OperationContext<unknown, unknown, unknown>, 'services' | 'requestId'>, operation: string) {
  return (id: string, error: unknown): void => {
    ctx.services.logger.error({ err: describeFailure(error), req_id: ctx.requestId, op: operation, item: id }, 'bulk item failed');
  };
}
