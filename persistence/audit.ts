import type { EntityManager } from '@mikro-orm/postgresql';
import { AuditRecordSchema, type AuditRecord } from './entities/audit-record.entity.ts';
import { newId } from './ids.ts';
import { asJsonb } from './jsonb-order.ts';

/** Who acted: the user (or an API key's service account), the key if any, and the request. */
export type AuditActor = { userId: string | null; applicationId: string | null; requestId: string | null };

export type AuditEntry = {
  /** The tenant the record belongs to (null: platform); must be the transaction's tenant scope. */
  siteId: string | null;
  action: 'create' | 'update' | 'delete' | (string & {});
  entityType: string;
  entityId: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  /**
   * Stores no diff (`changes` null): the audit API derives it from `previous_data` and `new_data`. Only
   * for a before and an after of plain JSON values without secret-looking fields, where the diff of the stored data
   * is the diff itself: the command path's moves (about 0.4 KB of WAL and a `jsonb` parse per record), dispatch records
   * and route records (a created record's diff repeated every field of its after, the decision's winner included).
   */
  changesFromData?: boolean;
};

const SECRET_KEY_PATTERN = /password|secret|token|api_key|key_hash|credential/i;

/** An audit record's column values (camelCase), secrets masked: what `recordAudit` writes, for callers writing SQL. */
export type AuditRecordValues = {
  id: string;
  siteId: string | null;
  userId: string | null;
  applicationId: string | null;
  action: string;
  entityType: string;
  entityId: string;
  /** Null: not stored, derived from `previousData` and `newData` (`changesFromData`). */
  changes: Record<string, unknown> | null;
  previousData: Record<string, unknown> | null;
  newData: Record<string, unknown> | null;
  requestId: string | null;
};

/** The audit record for `entry`, with a new id. Values of secret-looking fields are masked in before, after and the diff. */
export function auditRecordValues(actor: AuditActor, entry: AuditEntry): AuditRecordValues {
  return {
    id: newId('audit'),
    siteId: entry.siteId,
    userId: actor.userId,
    applicationId: actor.applicationId,
    action: entry.action,
    entityType: entry.entityType,
    entityId: entry.entityId,
    changes: entry.changesFromData ? null : maskedDiff(entry.before, entry.after),
    previousData: entry.before ? maskSecrets(entry.before) : null,
    newData: entry.after ? maskSecrets(entry.after) : null,
    requestId: actor.requestId,
  };
}

/** {@link diff} with the values of secret-looking fields masked (in place: the diff is this record's own). */
/**
 * A record's diff as stored or, for one stored without it (`changesFromData`: the command path's moves), the diff of its
 * stored before and after, as the diff stored whole would read back (keys in `jsonb`'s order).
 */
export function auditChanges(record: AuditRecord): Record<string, unknown> {
  return record.changes ?? (asJsonb(diff(record.previousData ?? null, record.newData ?? null)) as Record<string, unknown>);
}

function maskedDiff(before: Record<string, unknown> | null, after: Record<string, unknown> | null): Record<string, unknown> {
  const changes: Record<string, unknown> = diff(before, after);
  for (const key of Object.keys(changes)) {
    const change = changes[key] as { from: unknown; to: unknown };
    if (isSecretKey(key)) changes[key] = { from: mask(change.from), to: mask(change.to) };
  }
  return changes;
}

/** Field names seen, and whether they look secret: audit records repeat a few dozen names. */
const secretKeys = new Map<string, boolean>();
const isSecretKey = (key: string): boolean => {
  let secret = secretKeys.get(key);
  if (secret === undefined) {
    secret = SECRET_KEY_PATTERN.test(key);
    if (secretKeys.size < 10_000) secretKeys.set(key, secret);
  }
  return secret;
};

/**
 * Appends an audit record to the unit of work: it commits in the same transaction as the change it describes.
 * Values of secret-looking fields are masked in before, after and the diff.
 */
export function recordAudit(em: EntityManager, actor: AuditActor, entry: AuditEntry): void {
  em.create(AuditRecordSchema, auditRecordValues(actor, entry));
}

/** `{field: {from, to}}` for every top-level field whose JSON value differs. */
export function diff(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const key of keys) {
    if (key === 'updated_at') continue;
    const from = before?.[key] ?? null;
    const to = after?.[key] ?? null;
    if (!sameJson(from, to)) changes[key] = { from, to };
  }
  return changes;
}

/**
 * Whether two values have the same JSON text, comparing texts only when it cannot be told otherwise: most fields of
 * an entity's before and after are the same value, or the same instant, and a created record's are all new (null
 * before). Every audit record compared each field as two JSON texts, a record's whole decision or snapshot included.
 */
function sameJson(from: unknown, to: unknown): boolean {
  if (from === to) return true;
  if (from instanceof Date && to instanceof Date) return from.getTime() === to.getTime() || JSON.stringify(from) === JSON.stringify(to);
  if (from === null) return !neverJsonNull(to) && JSON.stringify(to) === 'null';
  if (to === null) return !neverJsonNull(from) && JSON.stringify(from) === 'null';
  return JSON.stringify(from) === JSON.stringify(to);
}

/** A value whose JSON text is certainly not `null`: a string, a boolean, a finite number, an array, an object without `toJSON`. */
function neverJsonNull(value: unknown): boolean {
  if (typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'object' && value !== null && (Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON !== 'function');
}

function maskSecrets(data: Record<string, unknown>): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) masked[key] = isSecretKey(key) ? mask(value) : value;
  return masked;
}

function mask(value: unknown): unknown {
  return value === null || value === undefined ? null : '[redacted]';
}
