import type { MigrationObject } from '@mikro-orm/core';
import { Foundation0001 } from './0001-foundation.ts';
import { Engine0002 } from './0002-engine.ts';
import { Queue0003 } from './0003-queue.ts';
import { Catalog0004 } from './0004-catalog.ts';
import { Webhooks0005 } from './0005-webhooks.ts';
import { Fleet0006 } from './0006-fleet.ts';
import { Workers0007 } from './0007-workers.ts';
import { Drivers0008 } from './0008-drivers.ts';
import { Routes0009 } from './0009-routes.ts';
import { Dispatch0010 } from './0010-dispatch.ts';
import { Realtime0011 } from './0011-realtime.ts';
import { Resources0012 } from './0012-resources.ts';
import { Integrations0013 } from './0013-integrations.ts';
import { Earnings0015 } from './0015-earnings.ts';
import { Chat0016 } from './0016-chat.ts';
import { Eta0017 } from './0017-eta.ts';
import { DispatchIndex0018 } from './0018-dispatch-index.ts';
import { DispatchChanges0019 } from './0019-dispatch-changes.ts';
import { PositionChanges0020 } from './0020-position-changes.ts';
import { PositionLogPlan0021 } from './0021-position-log-plan.ts';
import { DispatchPlanCheck0023 } from './0023-dispatch-plan-check.ts';

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
  { name: '0009-routes', class: Routes0009 },
  { name: '0010-dispatch', class: Dispatch0010 },
  { name: '0011-realtime', class: Realtime0011 },
  { name: '0012-resources', class: Resources0012 },
  { name: '0013-integrations', class: Integrations0013 },
  { name: '0015-earnings', class: Earnings0015 },
  { name: '0016-chat', class: Chat0016 },
  { name: '0017-eta', class: Eta0017 },
  { name: '0018-dispatch-index', class: DispatchIndex0018 },
  { name: '0019-dispatch-changes', class: DispatchChanges0019 },
  { name: '0020-position-changes', class: PositionChanges0020 },
  { name: '0021-position-log-plan', class: PositionLogPlan0021 },
  { name: '0023-dispatch-plan-check', class: DispatchPlanCheck0023 },
];
