import type { CommandScope } from '../commands/apply-transition.ts';
import type { ActorRegistry } from '../runtime/actor-registry.ts';
import type { RouteRecord } from '../routes/route-view.ts';
import type { DriverDay } from './driver-day-route.ts';

/**
 * What this process knows of a driver's day: the open route a dispatch last joined or created here (the row as that
 * dispatch wrote it), or `read` when the route must be read (a plan from memory failed, or a command that planned
 * from it has not committed yet). A day it has never seen is assumed to have no open route.
 * Memory is a guess, never the truth: a dispatch planned from it checks in its own statement that the route (or
 * the absence of one) is still as remembered (`dispatch_plan_holds`, migration 0023), and a miss rolls the command
 * back and runs it again on reads. So another process's writes, a restart or an eviction cost a retry, not a wrong row.
 */
type Known = { route: RouteRecord } | 'read';

/** Days remembered per engine (oldest forgotten first): enough for every driver of a large fleet over a few days. */
const MAX_DAYS = 200_000;

/** One memory per engine (its actor registry stands for it): two engines in one process do not share one. */
const memories = new WeakMap<ActorRegistry, Map<string, Known>>();

function memoryOf(scope: CommandScope): Map<string, Known> {
  let memory = memories.get(scope.registry);
  if (!memory) {
    memory = new Map();
    memories.set(scope.registry, memory);
  }
  return memory;
}

const keyOf = (scope: CommandScope, day: DriverDay) => `${scope.siteId}:${day.driverUserId}:${day.serviceDate}`;

function put(memory: Map<string, Known>, key: string, known: Known): void {
  memory.delete(key);
  memory.set(key, known);
  if (memory.size > MAX_DAYS) memory.delete(memory.keys().next().value!);
}

/**
 * The driver's open route of the day as remembered, to plan a dispatch from: `{ route }` to join, `{ route: null }`
 * to create one, or null when it must be read (also for a route still unassigned, whose own move is planned from
 * its row, or one this process moved since: its actor's version differs). Taking it marks the day `read` until the
 * dispatch commits (`rememberDriverDayRoute`), so a failed command's retry, or another command of the same
 * transaction, reads the route instead.
 */
export function takeDriverDayRoute(scope: CommandScope, day: DriverDay): { route: RouteRecord | null } | null {
  const memory = memoryOf(scope);
  const key = keyOf(scope, day);
  const known = memory.get(key);
  if (known === 'read') return null;
  put(memory, key, 'read');
  if (!known) return { route: null };
  const { route } = known;
  const actor = scope.touched.get(route.id) ?? scope.registry.get(scope.siteId, route.id, scope.clock.now().getTime());
  if (route.phase === 'unassigned' || (actor && actor.version !== route.version)) return null;
  return { route };
}

/** After the command commits: `route` (as it wrote it) is the driver's open route of the day. */
export function rememberDriverDayRoute(scope: CommandScope, day: DriverDay, route: RouteRecord): void {
  const key = keyOf(scope, day);
  scope.planAhead?.afterCommit(() => put(memoryOf(scope), key, { route }));
}

/** A write to the driver's day that does not say what it left (the step-by-step path): read the route next time. */
export function forgetDriverDayRoute(scope: CommandScope, day: DriverDay): void {
  put(memoryOf(scope), keyOf(scope, day), 'read');
}
