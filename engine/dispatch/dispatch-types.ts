/** The dispatch methods of the spec (`Enum method`); `auto` marks decisions made by the site's auto dispatch. */
export const DISPATCH_METHODS = ['manual', 'opt-in', 'round-robin', 'priority', 'load-balanced', 'zone-based', 'team', 'auto'] as const;
export type DispatchMethod = (typeof DISPATCH_METHODS)[number];

export const DISPATCH_STATUSES = ['pending', 'processing', 'completed'] as const;
export type DispatchStatus = (typeof DISPATCH_STATUSES)[number];

/** How a team dispatch picks its driver (spec: eta is the default). */
export const SELECTION_STRATEGIES = ['eta', 'load', 'round-robin'] as const;
export type SelectionStrategy = (typeof SELECTION_STRATEGIES)[number];

/** The strategies a site may run for auto dispatch and strategy-based dispatch. */
export const SITE_STRATEGIES = ['round-robin', 'priority', 'load-balanced', 'zone-based'] as const;
export type SiteStrategy = (typeof SITE_STRATEGIES)[number];

/** Every ranking the selector knows: the team strategies plus the site strategies. */
export type Strategy = SelectionStrategy | SiteStrategy;

/**
 * Why a driver was not eligible, checked in this order (the first that applies is the one reported):
 * `inactive` (worker or driver profile not active), `off_schedule`, `has_conflict` (an open job whose time window
 * overlaps this one), `capacity` (open jobs at the worker's max_load), `not_available` (the driver actor is not
 * `available`), `outside_zone` (zone-based only: none of the driver's zones contains the pickup), `no_vehicle` (no default vehicle
 * and the request gives none: spec rule 3).
 */
export const EXCLUSION_REASONS = ['inactive', 'off_schedule', 'has_conflict', 'capacity', 'not_available', 'outside_zone', 'no_vehicle'] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

/** One eligible driver and the figures the strategy ranked by. */
export type CandidateScore = {
  driver_id: string;
  driver_name: string;
  /** Travel time from the driver's last position to the first stop, minutes (one decimal); null without a position. */
  eta_minutes: number | null;
  /** Road distance estimate to the first stop, meters; null without a position. */
  distance_meters: number | null;
  /** Open jobs (assigned or in progress). */
  load: number;
  /** 1 = chosen; every candidate is ranked by the strategy's order. */
  rank: number;
};

export type Exclusion = { driver_id: string; driver_name: string; reason: ExclusionReason };

/**
 * The explanation kept on every dispatch record: who was considered, with which figures, who was left out and
 * why, which rule ranked them, and who won (null: nobody eligible).
 */
export type DispatchDecision = {
  strategy: Strategy | 'manual' | 'claim';
  tie_rule: string;
  decided_at: string;
  /** Drivers looked at, and how many of them were eligible. */
  considered: number;
  eligible: number;
  /** The best-ranked candidates (at most {@link DECISION_LIST_LIMIT}), winner first. */
  candidates: CandidateScore[];
  /** Drivers left out, with the first reason that applied (at most {@link DECISION_LIST_LIMIT}). */
  exclusions: Exclusion[];
  /** Every driver left out, counted by that reason (the list above names only the first ones); absent on decisions without exclusions to count (manual, claim, earlier records). */
  excluded_by_reason?: Partial<Record<ExclusionReason, number>>;
  winner: { driver_id: string; driver_name: string } | null;
  /** A scheduled dispatch that could not be carried out when it fell due, and why. */
  failure?: { code: string; message: string };
  /** A scheduled route dispatch carried out when due: the route's jobs that could not go to the driver, and why. */
  failed_jobs?: FailedJob[];
};

/** A job a batch (a route's or a bulk dispatch) could not dispatch, and why. */
export type FailedJob = { job_id: string; error: string; code: string };

/**
 * Lists in a stored decision are capped: a 10k-driver site must not write 10k rows of JSON per dispatch. Ten, not
 * 25: each listed driver is ~140 bytes of the dispatch's write (sent in the statement's text, parsed by PostgreSQL as
 * a jsonb parameter, stored compressed in the record; the audit keeps only the strategy and the winner), and past the
 * first few the list told nothing the counts do not; the exclusions are counted by reason in `excluded_by_reason`.
 */
export const DECISION_LIST_LIMIT = 10;

/** A decision's drivers left out: the first {@link DECISION_LIST_LIMIT} listed, every one counted by reason. */
export type ExcludedDrivers = { listed: Exclusion[]; byReason: Partial<Record<ExclusionReason, number>> };

export const noExcludedDrivers = (): ExcludedDrivers => ({ listed: [], byReason: {} });

/**
 * Counts `driver` under `reason`, and lists it while the list has room: a large fleet mostly off schedule made one
 * object per excluded driver per decision, for nothing.
 */
export function exclude(excluded: ExcludedDrivers, driver: { userId: string; name: string }, reason: ExclusionReason): void {
  excluded.byReason[reason] = (excluded.byReason[reason] ?? 0) + 1;
  if (excluded.listed.length < DECISION_LIST_LIMIT) excluded.listed.push({ driver_id: driver.userId, driver_name: driver.name, reason });
}
