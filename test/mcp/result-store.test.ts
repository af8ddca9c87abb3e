import { describe, expect, it } from 'vitest';
import { createResultStore, ResultTooLargeError } from '../../mcp/result-store.ts';
import { isLargeResult, PointerError, readPage, resolvePointer, summarizeResult } from '../../mcp/result-view.ts';

describe('result store', () => {
  it('drops the least recently used result past its entry limit', () => {
    const store = createResultStore({ maxEntries: 2, maxBytes: 1_000 });
    const first = store.put(200, 'a', 1);
    const second = store.put(200, 'b', 1);
    store.get(first.id);
    const third = store.put(200, 'c', 1);
    expect(store.get(second.id)).toBeUndefined();
    expect(store.get(first.id)?.value).toBe('a');
    expect(store.get(third.id)?.value).toBe('c');
  });

  it('drops old results to stay within its byte budget, and refuses one larger than the whole budget', () => {
    const store = createResultStore({ maxEntries: 10, maxBytes: 100 });
    const old = store.put(200, 'old', 60);
    const fresh = store.put(200, 'new', 60);
    expect(store.get(old.id)).toBeUndefined();
    expect(store.get(fresh.id)).toBeDefined();
    expect(store.totalBytes).toBe(60);
    expect(() => store.put(200, 'huge', 101)).toThrow(ResultTooLargeError);
  });
});

describe('result view', () => {
  const result = { data: Array.from({ length: 250 }, (_, id) => ({ id })), total: 250 };

  it('counts a result with more than 100 items, or more than 20 KB, as large', () => {
    expect(isLargeResult(result, 3_000)).toBe(true);
    expect(isLargeResult({ data: [1, 2, 3] }, 30)).toBe(false);
    expect(isLargeResult({ text: 'x' }, 30_000)).toBe(true);
  });

  it('summarises where the items are and how many', () => {
    expect(summarizeResult(result)).toMatchObject({ items_path: '/data', item_count: 250, shape: { data: 'array(250) of {"id":"number"}', total: 'number' } });
  });

  it('pages an array to its end and says where to go on', () => {
    const items = resolvePointer(result, '/data');
    expect(readPage(items, 200, 100)).toMatchObject({ total: 250, offset: 200, next_offset: null });
    expect(readPage(items, 0, 100)).toMatchObject({ next_offset: 100 });
    expect(readPage(items, 0, 100).items).toHaveLength(100);
  });

  it('cuts a page of very large items short rather than flooding the reply', () => {
    const big = Array.from({ length: 10 }, () => 'x'.repeat(40_000));
    const page = readPage(big, 0, 10);
    expect(page.items?.length).toBeLessThan(10);
    expect(page.next_offset).toBe(page.items?.length);
  });

  it('rejects a pointer that names nothing', () => {
    expect(resolvePointer(result, '/data/3/id')).toBe(3);
    expect(() => resolvePointer(result, '/nothing')).toThrow(PointerError);
    expect(() => resolvePointer(result, 'data')).toThrow(PointerError);
  });
});
