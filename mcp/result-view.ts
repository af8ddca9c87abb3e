import { isObject } from './openapi-index.ts';

/** Above this much JSON, or with an array of more than MAX_INLINE_ITEMS, a result is stored instead of returned. */
export const MAX_INLINE_BYTES = 20 * 1024;
export const MAX_INLINE_ITEMS = 100;
/** A page of a stored result stops adding items past this much JSON, so one item of megabytes cannot flood a reply. */
const MAX_PAGE_BYTES = 100 * 1024;
const PREVIEW_ITEMS = 3;

/** Where the items of a result are: the array itself (``), or its largest top-level array property (`/data`). */
export function findItemsPointer(value: unknown): string | null {
  if (Array.isArray(value)) return '';
  if (!isObject(value)) return null;
  let best: [key: string, length: number] | null = null;
  for (const [key, item] of Object.entries(value)) {
    if (Array.isArray(item) && (!best || item.length > best[1])) best = [key, item.length];
  }
  return best ? `/${escapePointerToken(best[0])}` : null;
}

/** True when a result should not be returned inline: too many bytes, or an item array too long to read at once. */
export function isLargeResult(value: unknown, bytes: number): boolean {
  if (bytes > MAX_INLINE_BYTES) return true;
  const pointer = findItemsPointer(value);
  const items = pointer === null ? undefined : resolvePointer(value, pointer);
  return Array.isArray(items) && items.length > MAX_INLINE_ITEMS;
}

/** What an agent needs to decide how to read a stored result: its shape, where the items are, how many, a preview. */
export function summarizeResult(value: unknown) {
  const itemsPointer = findItemsPointer(value);
  const items = itemsPointer === null ? undefined : resolvePointer(value, itemsPointer);
  return {
    shape: shapeOf(value, 0),
    ...(Array.isArray(items) ? { items_path: itemsPointer, item_count: items.length, first_items: items.slice(0, PREVIEW_ITEMS) } : {}),
  };
}

/** A compact type description: `{data: "array(5000) of {id: number, ...}"}`-like, depth-bounded. */
export function shapeOf(value: unknown, depth: number): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    const first = value.length > 0 ? shapeOf(value[0], depth + 1) : 'nothing';
    return `array(${value.length}) of ${typeof first === 'string' ? first : JSON.stringify(first)}`;
  }
  if (!isObject(value)) return typeof value;
  if (depth >= 3) return 'object';
  const keys = Object.keys(value);
  const shown = Object.fromEntries(keys.slice(0, 30).map((key) => [key, shapeOf(value[key], depth + 1)]));
  return keys.length > 30 ? { ...shown, '…': `${keys.length - 30} more keys` } : shown;
}

/** Thrown for a JSON pointer that is malformed or names nothing in the value. */
export class PointerError extends Error {}

/** The value at an RFC 6901 JSON pointer (`` is the whole value, `/data/0/id` goes down). Throws PointerError. */
export function resolvePointer(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  if (!pointer.startsWith('/')) throw new PointerError(`a JSON pointer starts with "/" (got ${JSON.stringify(pointer)}); use "" for the whole result`);
  let node = value;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length) node = node[Number(token)];
    else if (isObject(node) && Object.hasOwn(node, token)) node = node[token];
    else throw new PointerError(`nothing at ${JSON.stringify(pointer)}: no ${JSON.stringify(token)} there`);
  }
  return node;
}

/**
 * A page of the value at a pointer. For an array: items [offset, offset + limit) and the total, cut shorter when the
 * page would pass MAX_PAGE_BYTES (at least one item is always given; `next_offset` says where to go on, null at the
 * end). For anything else: the value, or its shape and the start of its JSON when it is larger than MAX_INLINE_BYTES.
 */
export function readPage(target: unknown, offset: number, limit: number) {
  if (!Array.isArray(target)) {
    const json = JSON.stringify(target) ?? 'null';
    if (json.length <= MAX_INLINE_BYTES) return { value: target };
    return { truncated: true, shape: shapeOf(target, 0), json_start: json.slice(0, MAX_INLINE_BYTES), hint: 'narrow down with a longer path' };
  }
  const items: unknown[] = [];
  let bytes = 0;
  for (let i = offset; i < Math.min(target.length, offset + limit); i++) {
    const size = Buffer.byteLength(JSON.stringify(target[i]) ?? 'null');
    if (items.length > 0 && bytes + size > MAX_PAGE_BYTES) break;
    items.push(target[i]);
    bytes += size;
  }
  const end = Math.min(offset, target.length) + items.length;
  return { total: target.length, offset, limit, items, next_offset: end < target.length ? end : null };
}

function escapePointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
