/** Objects' key orders by their keys as listed, for the few shapes the records written through it hold. */
const keyOrders = new Map<string, { keys: string[]; order: string[] }>();
/** Past this many shapes new ones are sorted on every call, not remembered (a decision has about five). */
const MAX_REMEMBERED_SHAPES = 256;

/** `jsonb`'s key order: shorter keys first, then by their UTF-8 bytes. */
const byJsonbOrder = (a: string, b: string) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b));

function jsonbKeyOrder(keys: string[]): string[] {
  const shape = keys.join('\u0000');
  const known = keyOrders.get(shape);
  // Keys holding the separator can share a joined text with other keys: a remembered order is used only for its own keys.
  if (known && sameKeys(known.keys, keys)) return known.order;
  const order = [...keys].sort(byJsonbOrder);
  if (!known && keyOrders.size < MAX_REMEMBERED_SHAPES) keyOrders.set(shape, { keys, order });
  return order;
}

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A JSON value as a `jsonb` column reads it back: what `JSON.parse(JSON.stringify(value))` gives (dates as their ISO
 * text, non-finite numbers as null, -0 as 0, undefined members left out of objects and null in arrays), with every object's
 * keys in `jsonb`'s order. Built from the value itself, not through text: the dispatch record's decision (up to 50
 * listed drivers) went through a stringify, a parse and a copy with a sort per object that made two `Buffer`s per
 * comparison, the largest garbage of a planned dispatch.
 */
export function asJsonb(value: unknown): unknown {
  // Numbers as JSON text gives them back: non-finite ones as null, -0 as 0.
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : null;
  if (value === null || typeof value !== 'object') return value;
  const json: unknown = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
  if (json !== value) return asJsonb(json);
  if (Array.isArray(value)) return value.map((item) => (item === undefined || typeof item === 'function' || typeof item === 'symbol' ? null : asJsonb(item)));
  const source = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of jsonbKeyOrder(Object.keys(source))) {
    const member = source[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    // An own `__proto__` member, as JSON.parse makes it (an assignment would set the copy's prototype instead).
    if (key === '__proto__') Object.defineProperty(copy, key, { value: asJsonb(member), enumerable: true, writable: true, configurable: true });
    else copy[key] = asJsonb(member);
  }
  return copy;
}
