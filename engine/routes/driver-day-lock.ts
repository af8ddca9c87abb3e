/**
 * The key of a driver's day's advisory lock (`pg_advisory_xact_lock(hashtext(key))`, transaction-scoped): every
 * command that opens or joins a driver's route of a date takes it first, so they take turns (route-membership.ts,
 * and dispatch's one-statement writes, engine/dispatch/dispatch-driver-day.ts and dispatch-planned.ts).
 */
export const driverDayLockKey = (siteId: string, day: { driverUserId: string; serviceDate: string }): string => `route:${siteId}:${day.driverUserId}:${day.serviceDate}`;
