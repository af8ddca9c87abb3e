import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static, TSchema } from 'typebox';
import type { Services } from '../app/services.ts';
import type { Site } from '../persistence/entities/site.entity.ts';
import type { AuditActor } from '../persistence/audit.ts';
import type { TenantScope } from '../persistence/tenant-scope.ts';
import type { TenantRead } from '../engine/runtime/tenant-read.ts';
import type { Principal } from './auth/principal.ts';
import type { Access } from './permissions.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Which hosts serve an operation: a site's host, the bare platform host, or both. */
export type HostKind = 'site' | 'platform' | 'any';

type StaticOf<S> = S extends TSchema ? Static<S> : undefined;

/** What a handler gets: validated input, the caller, the site of the Host, and a tenant-scoped transaction. */
export type OperationContext<Q, B, P> = {
  query: Q;
  body: B;
  params: P;
  /** null only for public operations called without a credential. */
  principal: Principal | null;
  /** SHA-256 of the credential presented, the key of its cache entry. */
  credentialHash: string | null;
  /** The site named by the Host; null on the platform host. */
  site: Site | null;
  services: Services;
  requestId: string;
  ip: string;
  actor: AuditActor;
  /** One transaction bound to this request's tenant (the Host's site, or the platform). */
  transaction<T>(work: (em: EntityManager) => Promise<T>, scope?: TenantScope): Promise<T>;
  /** One read-only statement in this request's tenant, in one round trip (`tenantRead`): for a read one statement answers whole. */
  read: TenantRead;
};

export type OperationDefinition<QS, BS, PS, RS extends TSchema> = {
  /** Stable operation id, e.g. `user.create`: the OpenAPI operationId and the MCP connector's name for it. */
  id: string;
  method: HttpMethod;
  /** Path under /api, with `{name}` parameters, e.g. `/job/{id}`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  host: HostKind;
  query?: QS;
  params?: PS;
  body?: BS;
  /** Success status; 200 unless given. */
  status?: number;
  response: RS;
  /** May answer synchronously (a cached result): the pipeline awaits only what is a promise. */
  handler: (ctx: OperationContext<StaticOf<QS>, StaticOf<BS>, StaticOf<PS>>) => Promise<Static<RS>> | Static<RS>;
};

/** An operation with its input types erased: what the router and the OpenAPI builder iterate over. */
export type Operation = {
  id: string;
  method: HttpMethod;
  path: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  host: HostKind;
  query?: TSchema;
  params?: TSchema;
  body?: TSchema;
  status: number;
  response: TSchema;
  handler: (ctx: OperationContext<unknown, unknown, unknown>) => unknown;
};

/** One definition per operation builds its route, its validation and its OpenAPI entry. */
export function defineOperation<
  QS extends TSchema | undefined = undefined,
  BS extends TSchema | undefined = undefined,
  PS extends TSchema | undefined = undefined,
  RS extends TSchema = TSchema,
>(definition: OperationDefinition<QS, BS, PS, RS>): Operation {
  return { ...definition, status: definition.status ?? 200 } as unknown as Operation;
}
