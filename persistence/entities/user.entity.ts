import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { timestamps } from './columns.ts';

/** A person or an application's service account. Global: a user reaches sites through profiles. */
export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    id: p.string().primary(),
    email: p.string().unique(),
    passwordHash: p.string().nullable(),
    /** The site whose staff set the password (null: the user themself, or the platform). See migration 0039. */
    passwordSetBySiteId: p.string().nullable(),
    firstName: p.string().nullable(),
    lastName: p.string().nullable(),
    displayName: p.string().nullable(),
    phone: p.string().nullable(),
    phoneCountry: p.string().nullable(),
    organizationId: p.string().nullable(),
    homeAddressId: p.string().nullable(),
    isPlatformOperator: p.boolean().default(false),
    isServiceAccount: p.boolean().default(false),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type User = InferEntity<typeof UserSchema>;
