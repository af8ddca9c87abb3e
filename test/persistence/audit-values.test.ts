import { describe, expect, it } from 'vitest';
import { auditRecordValues } from '../../persistence/audit.ts';

const actor = { userId: 'usr_1', applicationId: null, requestId: 'req_1' };

describe('audit record values', () => {
  // The diff itself: audit-diff.test.ts.
  it('masks secret-looking fields in the before, the after and the diff', () => {
    const values = auditRecordValues(actor, {
      siteId: 'site_1',
      action: 'update',
      entityType: 'User',
      entityId: 'usr_2',
      before: { name: 'a', password_hash: 'h1', api_key: null },
      after: { name: 'b', password_hash: 'h2', api_key: 'k' },
    });
    expect(values).toMatchObject({
      siteId: 'site_1',
      userId: 'usr_1',
      requestId: 'req_1',
      previousData: { name: 'a', password_hash: '[redacted]', api_key: null },
      newData: { name: 'b', password_hash: '[redacted]', api_key: '[redacted]' },
      changes: { name: { from: 'a', to: 'b' }, password_hash: { from: '[redacted]', to: '[redacted]' }, api_key: { from: null, to: '[redacted]' } },
    });
    expect(values.id).toMatch(/^aud_/);
  });
});
