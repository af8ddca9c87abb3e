import type { Operation } from '../operation.ts';
import { addressOperations } from './address.operations.ts';
import { applicationOperations } from './application.operations.ts';
import { auditOperations } from './audit.operations.ts';
import { authOperations } from './auth.operations.ts';
import { mailboxOperations } from './mailbox.operations.ts';
import { organizationOperations } from './organization.operations.ts';
import { siteOperations } from './site.operations.ts';
import { userOperations } from './user.operations.ts';

/** Every operation the API serves, in the order of the reference page. */
export const ALL_OPERATIONS: Operation[] = [
  ...authOperations,
  ...organizationOperations,
  ...siteOperations,
  ...userOperations,
  ...applicationOperations,
  ...addressOperations,
  ...auditOperations,
  ...mailboxOperations,
];
