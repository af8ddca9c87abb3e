import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { VehicleSchema, type Vehicle, type VehicleCapacity } from '../../persistence/entities/vehicle.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { applyPatch, auditSnapshot, containsPattern } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';

/**
 * The vehicle types the API accepts. A closed list so that matching (service types name the vehicle types able to
 * serve them) compares like with like; `other` covers the rest until a type earns its own name.
 */
export const VEHICLE_TYPES = ['car', 'van', 'truck', 'bike', 'cargo_bike', 'scooter', 'motorcycle', 'on_foot', 'other'] as const;
export type VehicleType = (typeof VEHICLE_TYPES)[number];

export type VehicleInput = { name: string; type: VehicleType; plate_number?: string; capacity?: VehicleCapacity };

const UPDATABLE = { name: 'name', type: 'type', plate_number: 'plateNumber', capacity: 'capacity', is_active: 'isActive' } as const;

export async function createVehicle(em: EntityManager, actor: AuditActor, siteId: string, input: VehicleInput): Promise<Vehicle> {
  const vehicle = em.create(VehicleSchema, {
    id: newId('vehicle'),
    siteId,
    name: input.name,
    type: input.type,
    plateNumber: input.plate_number ?? null,
    capacity: input.capacity ?? null,
    isActive: true,
  });
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'Vehicle', entityId: vehicle.id, before: null, after: auditSnapshot(vehicle) });
  await em.flush();
  return vehicle;
}

/** @throws DomainError 404 when absent or another site's */
export async function getVehicle(em: EntityManager, id: string): Promise<Vehicle> {
  const vehicle = await em.findOne(VehicleSchema, { id });
  if (!vehicle) throw DomainError.notFound('Vehicle', id);
  return vehicle;
}

/**
 * Three-state update: a value sets a field, an omitted one stays, `null` clears it. A capacity given replaces the
 * whole capacity (limits left out of it are cleared), so a client never has to reason about merged JSON.
 * @throws DomainError 404
 */
export async function updateVehicle(em: EntityManager, actor: AuditActor, siteId: string, patch: { id: string } & Record<string, unknown>): Promise<Vehicle> {
  const vehicle = await getVehicle(em, patch.id);
  const before = auditSnapshot(vehicle);
  applyPatch(vehicle, patch, UPDATABLE);
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'Vehicle', entityId: vehicle.id, before, after: auditSnapshot(vehicle) });
  await em.flush();
  return vehicle;
}

export async function searchVehicles(
  em: EntityManager,
  filter: { q?: string; type?: string; is_active?: boolean },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[Vehicle[], number]> {
  const pattern = filter.q ? containsPattern(filter.q) : null;
  return em.findAndCount(
    VehicleSchema,
    {
      ...(pattern ? { $or: [{ name: { $ilike: pattern } }, { plateNumber: { $ilike: pattern } }] } : {}),
      ...(filter.type === undefined ? {} : { type: filter.type }),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
    },
    page,
  );
}
