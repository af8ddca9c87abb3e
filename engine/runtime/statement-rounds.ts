/** A `pg` result of one statement (what `transformRawResult` takes). */
export type RawResult = unknown;

/** 0A000 feature_not_supported (a cached plan whose result type changed), 26000 invalid_sql_statement_name, 42P01 undefined_table, 42703 undefined_column. */
const STALE_PLAN_CODES = new Set(['0A000', '26000', '42P01', '42703']);

/** True for an error a prepared statement's stale plan or a schema change causes (see `failedOnSchema`). */
export const isStalePlanError = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && STALE_PLAN_CODES.has(code);
};

/** Why a pipelined batch stopped: the transaction must roll back and its units run another way. */
export class RoundsAborted extends Error {
  constructor(reason: string) {
    super(`pipelined batch aborted: ${reason}`);
  }
}

/** The transaction-local setting row-level security reads for the acting user. */
export const userSetting = (literal: (value: string) => string, userId: string | null): string => `select set_config('app.user_id', ${literal(userId ?? '')}, true)`;

type Submitted = { userId: string; before: readonly string[]; text: string; resolve: (result: RawResult) => void; reject: (error: unknown) => void };

export type StatementRoundsOptions = {
  /** Sends one multi-statement query (values inlined) on the batch's connection; resolves with its results. */
  send: (text: string) => Promise<unknown>;
  /** Quotes a string as an SQL literal. */
  literal: (value: string) => string;
  /** Units running at the start (each calls `finished` once). */
  units: number;
};

/**
 * The statements of a batch's units, running concurrently on one connection, gathered into rounds: once every unit
 * still running has asked for a statement (or at the next turn of the event loop, whichever comes first), the waiting
 * statements go out as ONE multi-statement simple query, in submission order, each behind a `set_config` of its
 * unit's user when the previous statement ran as another user (row-level security reads `app.user_id`, a
 * transaction-local setting). A batch of N units that each send one statement costs one round trip, not N.
 *
 * PostgreSQL runs the statements of one query one after another in the batch's transaction, so a unit sees what the
 * statements before it wrote. The first error (a failed statement, a result count that does not match) aborts the
 * rounds: every waiting and later statement fails with {@link RoundsAborted}, and the caller rolls back.
 */
export class StatementRounds {
  private waiting: Submitted[] = [];
  private running: number;
  private lastUserId = '';
  private scheduled = false;
  private inFlight = false;
  private abortedBy: RoundsAborted | null = null;
  private failed = false;
  /** SQLSTATE of the failed round's error, when PostgreSQL gave one. */
  private failureCode: string | undefined;

  constructor(private readonly options: StatementRoundsOptions) {
    this.running = options.units;
  }

  /**
   * Queues `text` (one statement) for the next round, run as `userId`, right after the statements `before` (the
   * unit's deferred writes, whose results nobody reads); resolves with the result of `text`.
   */
  submit(userId: string | null, text: string, before: readonly string[] = []): Promise<RawResult> {
    if (this.abortedBy) return Promise.reject(this.abortedBy);
    return new Promise((resolve, reject) => {
      this.waiting.push({ userId: userId ?? '', before, text, resolve, reject });
      this.pulse();
    });
  }

  /** A unit has finished (it sends nothing more). */
  finished(): void {
    this.running -= 1;
    this.pulse();
  }

  /** Stops the rounds: waiting and later statements fail with the reason. */
  abort(reason: string): void {
    this.abortedBy ??= new RoundsAborted(reason);
    const waiting = this.waiting;
    this.waiting = [];
    for (const statement of waiting) statement.reject(this.abortedBy);
  }

  /** The user the last statement sent ran as (`app.user_id`; '' for none). */
  get currentUserId(): string {
    return this.lastUserId;
  }

  get aborted(): boolean {
    return this.abortedBy !== null;
  }

  /**
   * True when the failure is one a prepared statement's stale plan or a schema change causes ("cached plan must
   * not change result type", a table, column or prepared statement gone), not an ordinary data error such as a
   * unique violation, which the engine retries and which says nothing about the session's prepared statements.
   */
  get failedOnSchema(): boolean {
    return this.failed && this.failureCode !== undefined && STALE_PLAN_CODES.has(this.failureCode);
  }

  /**
   * Sends now when every running unit waits for a statement; otherwise at the next turn of the event loop (a unit
   * busy with something else joins a later round). One round at a time: statements asked for meanwhile wait for it.
   */
  private pulse(): void {
    if (this.waiting.length === 0 || this.inFlight) return;
    if (this.waiting.length >= this.running) {
      this.send();
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  private send(): void {
    const round = this.waiting;
    if (round.length === 0 || this.inFlight) return;
    this.waiting = [];
    this.inFlight = true;
    const parts: string[] = [];
    const positions: number[] = [];
    for (const statement of round) {
      if (statement.userId !== this.lastUserId) {
        parts.push(userSetting(this.options.literal, statement.userId));
        this.lastUserId = statement.userId;
      }
      parts.push(...statement.before);
      positions.push(parts.length);
      parts.push(statement.text);
    }
    this.options.send(parts.join('; ')).then(
      (results) => {
        this.inFlight = false;
        const all = Array.isArray(results) ? results : [results];
        if (all.length !== parts.length) {
          // A statement held several (or none): its results cannot be told apart from its neighbours'.
          this.abort(`${parts.length} statements gave ${all.length} results`);
          for (const statement of round) statement.reject(this.abortedBy);
          return;
        }
        round.forEach((statement, i) => statement.resolve(all[positions[i]!]));
        this.pulse();
      },
      (error: unknown) => {
        this.inFlight = false;
        this.failed = true;
        this.failureCode = (error as { code?: unknown }).code === undefined ? undefined : String((error as { code: unknown }).code);
        this.abort(`a statement failed (${error instanceof Error ? error.message : String(error)})`);
        for (const statement of round) statement.reject(this.abortedBy);
      },
    );
  }
}
