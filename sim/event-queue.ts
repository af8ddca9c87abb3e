/**
 * The discrete-event simulation's agenda: a binary min-heap on (time, sequence). The sequence number makes events
 * at the same virtual second run in the order they were scheduled, so a run never depends on heap internals.
 */
export class EventQueue<T> {
  private readonly heap: { at: number; seq: number; value: T }[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, value: T): void {
    this.heap.push({ at, seq: this.seq++, value });
    this.up(this.heap.length - 1);
  }

  peekTime(): number | undefined {
    return this.heap[0]?.at;
  }

  pop(): { at: number; value: T } | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (!top || !last) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return { at: top.at, value: top.value };
  }

  private less(i: number, j: number): boolean {
    const a = this.heap[i]!;
    const b = this.heap[j]!;
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const tmp = this.heap[i]!;
    this.heap[i] = this.heap[j]!;
    this.heap[j] = tmp;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < this.heap.length && this.less(l, smallest)) smallest = l;
      if (r < this.heap.length && this.less(r, smallest)) smallest = r;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
