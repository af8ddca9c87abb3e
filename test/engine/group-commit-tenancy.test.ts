import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../engine/runtime/group-commit.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { useTwoSites } from '../support/two-sites.ts';

const sites = useTwoSites();

type Seen = { transaction: string; profile: string | null };

describe('group commit keeps users apart within a batch', () => {
  it('does not serve one user a row that row-level security showed only to another user of the same batch', async () => {
    const orm = sites.server.services.db.orm;
    // Acme's dispatcher has a profile on acme: in a transaction bound to globex, row-level security shows it to
    // that user (their own profile on another site) and to no other globex user.
    const [own] = await inTenantScope(orm, { siteId: sites.acme.site.id }, (em) =>
      em.execute<{ id: string }[]>('select id from user_profile where user_id = ?', [sites.acme.users.dispatcher.id]),
    );
    const profileId = own!.id;
    const groupCommit = new GroupCommit<Seen>({ orm, maxConcurrent: 1 });
    // A primary-key read without the ORM's site filter: row-level security is the only guard left, and an
    // EntityManager answers it from its identity map if it already holds the row.
    const read = (userId: string) =>
      groupCommit.run({
        siteId: sites.globex.site.id,
        userId,
        work: async (em) => {
          const [tx] = await em.execute<{ id: string }[]>('select txid_current()::text as id');
          const profile = await em.findOne(UserProfileSchema, { id: profileId }, { filters: false });
          return { transaction: tx!.id, profile: profile?.id ?? null };
        },
      });
    const [owner, other, ownerAgain] = await Promise.all([read(sites.acme.users.dispatcher.id), read(sites.globex.users.dispatcher.id), read(sites.acme.users.dispatcher.id)]);
    // One batch, one transaction: the units really did share it.
    expect(new Set([owner.transaction, other.transaction, ownerAgain.transaction]).size).toBe(1);
    expect(owner.profile).toBe(profileId);
    expect(other.profile).toBeNull();
    expect(ownerAgain.profile).toBe(profileId);
  });
});
