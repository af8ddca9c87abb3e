import type { MigrationObject } from '@mikro-orm/core';
import { Foundation0001 } from './0001-foundation.ts';
import { Engine0002 } from './0002-engine.ts';
import { Queue0003 } from './0003-queue.ts';
import { Catalog0004 } from './0004-catalog.ts';
import { Webhooks0005 } from './0005-webhooks.ts';
import { Fleet0006 } from './0006-fleet.ts';
import { Workers0007 } from './0007-workers.ts';
import { Drivers0008 } from './0008-drivers.ts';

/** Checked-in migrations, in order. Listed explicitly so they run the same under tsx and in tests. */
export const MIGRATIONS: MigrationObject[] = [
  { name: '0001-foundation', class: Foundation0001 },
  { name: '0002-engine', class: Engine0002 },
  { name: '0003-queue', class: Queue0003 },
  { name: '0004-catalog', class: Catalog0004 },
  { name: '0005-webhooks', class: Webhooks0005 },
  { name: '0006-fleet', class: Fleet0006 },
  { name: '0007-workers', class: Workers0007 },
  { name: '0008-drivers', class: Drivers0008 },
];
