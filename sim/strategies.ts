import { SimApiError, type Credential, type SiteApi } from './site-api.ts';

/** The strategies a comparison can run, named as on the command line. */
export const STRATEGY_NAMES = ['round-robin', 'team-eta', 'team-load', 'team-round-robin', 'pool', 'load-balanced', 'priority', 'zone-based'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

export type DispatchOutcome =
  | { kind: 'assigned'; driverUserId: string; dispatchId: string; pending: boolean }
  | { kind: 'pooled'; dispatchId: string }
  | { kind: 'none'; reason: string };

export type DispatchRequest = { jobId: string; teamId: string; requireConfirmation: boolean };

/** How one strategy dispatches a new job through the REST API (the engine decides; the simulator only asks). */
export type StrategyAdapter = { name: StrategyName; usesPool: boolean; dispatch(api: SiteApi, request: DispatchRequest): Promise<DispatchOutcome> };

export function strategyAdapter(name: StrategyName): StrategyAdapter {
  if (name === 'pool') return { name, usesPool: true, dispatch: postToPool };
  if (name.startsWith('team-')) {
    const selection = name.slice('team-'.length);
    return { name, usesPool: false, dispatch: (api, request) => teamDispatch(api, request, selection) };
  }
  return { name, usesPool: false, dispatch: (api, request) => strategyDispatch(api, request, name) };
}

export function parseStrategies(list: string): StrategyName[] {
  const names = list.split(',').map((s) => s.trim()).filter(Boolean);
  for (const name of names) {
    if (!(STRATEGY_NAMES as readonly string[]).includes(name)) throw new Error(`unknown strategy "${name}"; known: ${STRATEGY_NAMES.join(', ')}`);
  }
  return names as StrategyName[];
}

/** "Nobody can take it now" answers: the job waits and is offered again; anything else is a bug worth stopping for. */
const NO_DRIVER_CODES = new Set(['NO_DRIVER_AVAILABLE', 'NO_ELIGIBLE_DRIVER', 'NO_DRIVER']);

async function orNone(work: () => Promise<DispatchOutcome>): Promise<DispatchOutcome> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SimApiError && (NO_DRIVER_CODES.has(error.code) || error.status === 422 || error.status === 409)) return { kind: 'none', reason: noneReason(error) };
    throw error;
  }
}

/** Reasons a driver is left out that a freed slot can change (a job done, a shift begun). */
const SLOT_REASONS: ReadonlySet<string> = new Set(['capacity', 'not_available', 'off_schedule', 'has_conflict']);

/**
 * The code, unless nobody was eligible for a reason no freed slot changes (every driver outside the pickup's zone,
 * say): then `NO_ELIGIBLE_DRIVER:<reasons>`, which the queue retries now and then rather than waiting on a free
 * slot with every later job queued behind it.
 */
export function noneReason(error: SimApiError): string {
  const counted = (error.details.decision as { excluded_by_reason?: Record<string, number> } | undefined)?.excluded_by_reason;
  if (error.code !== 'NO_ELIGIBLE_DRIVER' || !counted) return error.code;
  const others = Object.keys(counted).filter((reason) => !SLOT_REASONS.has(reason));
  return others.length === 0 ? error.code : `${error.code}:${others.sort().join(',')}`;
}

type DispatchRecord = { id: string; assigned_to_driver_id: string | null; status: string };
type TeamAnswer = { selected_driver_id: string | null; dispatch: DispatchRecord };

function teamDispatch(api: SiteApi, request: DispatchRequest, selection: string): Promise<DispatchOutcome> {
  return orNone(async () => {
    const data = await api.call<TeamAnswer>('POST', '/api/dispatch/team/job', {
      job_id: request.jobId,
      team_id: request.teamId,
      selection_strategy: selection,
      require_confirmation: request.requireConfirmation,
    });
    return assigned(data.dispatch);
  });
}

type AssignAnswer = { dispatch: DispatchRecord };

function assigned(dispatch: DispatchRecord): DispatchOutcome {
  if (!dispatch.assigned_to_driver_id) return { kind: 'none', reason: 'NO_DRIVER' };
  return { kind: 'assigned', driverUserId: dispatch.assigned_to_driver_id, dispatchId: dispatch.id, pending: dispatch.status === 'pending' };
}

function strategyDispatch(api: SiteApi, request: DispatchRequest, method: string): Promise<DispatchOutcome> {
  return orNone(async () => {
    const data = await api.call<AssignAnswer>('POST', '/api/dispatch/assign', { job_id: request.jobId, method, require_confirmation: request.requireConfirmation });
    return assigned(data.dispatch);
  });
}

type PoolAnswer = { succeeded: DispatchRecord[]; failed: { id: string; code: string; error: string }[] };

/** Posts the job to the team's pool (a bulk operation: its answer is `{succeeded, failed}`). */
async function postToPool(api: SiteApi, request: DispatchRequest): Promise<DispatchOutcome> {
  const answer = await api.raw('POST', '/api/dispatch/pool', { job_ids: [request.jobId], team_id: request.teamId }, api.staff);
  const body = answer.body as PoolAnswer & { data?: PoolAnswer; code?: string; error?: string };
  const result = body.data ?? body;
  if (answer.status !== 200 || !Array.isArray(result.succeeded)) throw new SimApiError(answer.status, body.code ?? 'UNKNOWN', `POST /api/dispatch/pool → ${answer.status}: ${JSON.stringify(body)}`);
  const posted = result.succeeded[0];
  if (!posted) return { kind: 'none', reason: result.failed[0]?.code ?? 'NOT_POSTED' };
  return { kind: 'pooled', dispatchId: posted.id };
}

/** Pool jobs this driver may claim, the 100 oldest (the list's largest page): dispatch id and job id. */
export async function listPool(api: SiteApi, driver: Credential): Promise<{ dispatchId: string; jobId: string }[]> {
  const data = await api.call<{ dispatch_id: string; job: { id: string } }[]>('GET', '/api/dispatch/pool?per_page=100', undefined, driver);
  return data.map((entry) => ({ dispatchId: entry.dispatch_id, jobId: entry.job.id }));
}

/** true: this driver won the job; false: someone else claimed it first (409). */
export async function claimPoolJob(api: SiteApi, driver: Credential, dispatchId: string): Promise<boolean> {
  try {
    await api.call('POST', '/api/dispatch/claim', { dispatch_id: dispatchId }, driver);
    return true;
  } catch (error) {
    if (error instanceof SimApiError && (error.status === 409 || error.status === 404)) return false;
    throw error;
  }
}

export async function acceptOffer(api: SiteApi, driver: Credential, dispatchId: string): Promise<void> {
  await api.call('POST', '/api/dispatch/accept', { dispatch_id: dispatchId }, driver);
}
