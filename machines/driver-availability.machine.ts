import { setup, transition, type SnapshotFrom } from 'xstate';

export const AVAILABILITIES = ['offline', 'available', 'busy', 'on_break'] as const;
export type Availability = (typeof AVAILABILITIES)[number];

export type AvailabilityEvent =
  | { type: 'go_online' }
  | { type: 'go_offline' }
  | { type: 'take_break' }
  | { type: 'end_break' }
  | { type: 'become_busy' }
  | { type: 'become_free' };

/**
 * What the machine knows besides its state: whether the office stood the worker down (worker record `inactive` or
 * `suspended`). Loaded with each command, never stored (the stored snapshot is the value alone).
 */
export type AvailabilityContext = { officeStoodDown: boolean };

/**
 * The legal moves, one event per move so the event names the intent. A busy driver is working a job: they must
 * become free before a break or going offline, so work in hand is never silently abandoned. Going offline is open
 * from available and on_break, and from busy only once the office stood the worker down: such a driver may not
 * become available, so without that move they could never leave busy (the office has taken over their work).
 */
export const AVAILABILITY_MOVES: readonly { from: Availability; event: AvailabilityEvent['type']; to: Availability; guard?: 'officeStoodDown' }[] = [
  { from: 'offline', event: 'go_online', to: 'available' },
  { from: 'available', event: 'go_offline', to: 'offline' },
  { from: 'available', event: 'take_break', to: 'on_break' },
  { from: 'available', event: 'become_busy', to: 'busy' },
  { from: 'on_break', event: 'end_break', to: 'available' },
  { from: 'on_break', event: 'go_offline', to: 'offline' },
  { from: 'busy', event: 'become_free', to: 'available' },
  { from: 'busy', event: 'go_offline', to: 'offline', guard: 'officeStoodDown' },
];

const onFrom = (from: Availability) =>
  Object.fromEntries(AVAILABILITY_MOVES.filter((m) => m.from === from).map((m) => [m.event, m.guard ? { target: m.to, guard: m.guard } : { target: m.to }]));

/** Pure: no actions; the context holds only the office's decision (facts such as the position live in the row). */
export const driverAvailabilityMachine = setup({
  types: { context: {} as AvailabilityContext, events: {} as AvailabilityEvent },
  guards: { officeStoodDown: ({ context }) => context.officeStoodDown },
}).createMachine({
  id: 'driver-availability',
  initial: 'offline',
  context: { officeStoodDown: false },
  states: Object.fromEntries(AVAILABILITIES.map((state) => [state, { on: onFrom(state) }])) as Record<
    Availability,
    { on: Record<string, { target: string; guard?: 'officeStoodDown' }> }
  >,
});

export type AvailabilitySnapshot = SnapshotFrom<typeof driverAvailabilityMachine>;

/** What is stored of the actor, as for jobs and stops (machines/entity-snapshot.ts). */
export type PersistedAvailability = { value: string };

/**
 * The snapshot of a stored value; a driver without a row (or with an unknown value) is offline. `context` is the
 * office's decision as it stands now (a worker not stood down when omitted).
 */
export function restoreAvailability(persisted: PersistedAvailability | null, context: AvailabilityContext = { officeStoodDown: false }): AvailabilitySnapshot {
  const value = persisted && (AVAILABILITIES as readonly string[]).includes(persisted.value) ? persisted.value : 'offline';
  return driverAvailabilityMachine.resolveState({ value, context });
}

export function availabilityOf(snapshot: AvailabilitySnapshot): Availability {
  return String(snapshot.value) as Availability;
}

/** The event that moves the actor to `target` from where it is, or null when no legal move does. */
export function eventTowards(snapshot: AvailabilitySnapshot, target: Availability): AvailabilityEvent | null {
  const move = AVAILABILITY_MOVES.find((m) => m.from === availabilityOf(snapshot) && m.to === target);
  return move && snapshot.can({ type: move.event }) ? { type: move.event } : null;
}

/** The availabilities reachable in one move (for the 409's allowed list). */
export function allowedAvailabilities(snapshot: AvailabilitySnapshot): Availability[] {
  return AVAILABILITY_MOVES.filter((m) => m.from === availabilityOf(snapshot) && snapshot.can({ type: m.event })).map((m) => m.to);
}

/**
 * Applies an event without side effects (XState's pure `transition`), so the caller writes the row first.
 * @returns null when the event is not allowed in this state
 */
export function applyAvailability(snapshot: AvailabilitySnapshot, event: AvailabilityEvent): AvailabilitySnapshot | null {
  if (!snapshot.can(event)) return null;
  return transition(driverAvailabilityMachine, snapshot, event)[0];
}
