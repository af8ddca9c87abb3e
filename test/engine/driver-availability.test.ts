import { describe, expect, it } from 'vitest';
import {
  AVAILABILITIES,
  allowedAvailabilities,
  applyAvailability,
  availabilityOf,
  eventTowards,
  restoreAvailability,
} from '../../machines/driver-availability.machine.ts';

/** Every legal move, as the product decided it; anything else is refused. */
const LEGAL = new Set(['offline>available', 'available>offline', 'available>on_break', 'available>busy', 'on_break>available', 'on_break>offline', 'busy>available']);

/** A busy driver's snapshot, stood down by the office or not. */
const busy = (officeStoodDown: boolean) => restoreAvailability({ value: 'busy' }, { officeStoodDown });

describe('driver availability machine', () => {
  it('allows exactly the decided moves between the four availabilities', () => {
    for (const from of AVAILABILITIES) {
      for (const to of AVAILABILITIES) {
        if (from === to) continue;
        const snapshot = restoreAvailability({ value: from });
        const event = eventTowards(snapshot, to);
        const next = event ? applyAvailability(snapshot, event) : null;
        expect(next ? availabilityOf(next) : null, `${from} > ${to}`).toBe(LEGAL.has(`${from}>${to}`) ? to : null);
      }
    }
  });

  it('lets a busy driver go offline only once the office stood the worker down (they may no longer become free)', () => {
    expect(allowedAvailabilities(busy(false))).toEqual(['available']);
    expect(eventTowards(busy(false), 'offline')).toBeNull();
    const event = eventTowards(busy(true), 'offline');
    expect(event).toEqual({ type: 'go_offline' });
    expect(availabilityOf(applyAvailability(busy(true), event!)!)).toBe('offline');
    expect(eventTowards(busy(true), 'on_break')).toBeNull();
  });

  it('treats a driver without a row (or with an unknown value) as offline', () => {
    expect(availabilityOf(restoreAvailability(null))).toBe('offline');
    expect(availabilityOf(restoreAvailability({ value: 'sleeping' }))).toBe('offline');
    expect(allowedAvailabilities(restoreAvailability(null))).toEqual(['available']);
  });

  it('refuses an event the state does not take, without changing the snapshot', () => {
    const snapshot = busy(false);
    expect(applyAvailability(snapshot, { type: 'take_break' })).toBeNull();
    expect(availabilityOf(snapshot)).toBe('busy');
  });
});
