import type { CandidateScore, Strategy } from './dispatch-types.ts';
import type { DriverFacts } from './driver-facts.ts';
import type { Leg } from './evaluate.ts';

export type Ranked = { facts: DriverFacts; leg: Leg };

/**
 * The tie rules, stated on every decision so a dispatcher can check the choice by hand:
 * - eta (also priority and zone-based): shortest travel time; no known position ranks last; then fewer open jobs;
 *   then the lower driver id.
 * - load (also load-balanced): fewest open jobs; then shortest travel time (no position last); then the lower id.
 * - round-robin: the next driver id after the site's (or team's) cursor, wrapping around; the cursor is the last
 *   driver chosen, stored in the database.
 */
export const TIE_RULES: Record<Strategy, string> = {
  eta: 'eta asc (no position last), then load asc, then driver_id asc',
  priority: 'most urgent job first; driver by eta asc (no position last), then load asc, then driver_id asc',
  'zone-based': 'drivers of a zone containing the pickup; eta asc (no position last), then load asc, then driver_id asc',
  load: 'load asc, then eta asc (no position last), then driver_id asc',
  'load-balanced': 'load asc, then eta asc (no position last), then driver_id asc',
  'round-robin': 'next driver_id after the cursor (last driver chosen), wrapping around',
};

const seconds = (leg: Leg) => leg?.seconds ?? Number.POSITIVE_INFINITY;
const byId = (a: Ranked, b: Ranked) => (a.facts.userId < b.facts.userId ? -1 : a.facts.userId > b.facts.userId ? 1 : 0);
const byEta = (a: Ranked, b: Ranked) => seconds(a.leg) - seconds(b.leg) || a.facts.load - b.facts.load || byId(a, b);
const byLoad = (a: Ranked, b: Ranked) => a.facts.load - b.facts.load || seconds(a.leg) - seconds(b.leg) || byId(a, b);

/**
 * Orders eligible drivers by the strategy; the first is the winner. `cursor` is the round-robin cursor (the last
 * driver chosen in this scope), ignored by the other strategies. Deterministic: equal inputs give equal orders.
 */
export function rankDrivers(strategy: Strategy, eligible: Ranked[], cursor: string | null): Ranked[] {
  if (strategy === 'round-robin') {
    const sorted = [...eligible].sort(byId);
    const next = cursor === null ? 0 : sorted.findIndex((r) => r.facts.userId > cursor);
    const start = next < 0 ? 0 : next;
    return [...sorted.slice(start), ...sorted.slice(0, start)];
  }
  if (strategy === 'load' || strategy === 'load-balanced') return [...eligible].sort(byLoad);
  return [...eligible].sort(byEta);
}

/** The decision's candidate rows: figures rounded for people, ranks from 1. */
export function toCandidateScores(ranked: Ranked[]): CandidateScore[] {
  return ranked.map((r, index) => ({
    driver_id: r.facts.userId,
    driver_name: r.facts.name,
    eta_minutes: r.leg ? Math.round(r.leg.seconds / 6) / 10 : null,
    distance_meters: r.leg ? Math.round(r.leg.meters) : null,
    load: r.facts.load,
    rank: index + 1,
  }));
}
