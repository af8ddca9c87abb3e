/** Roles a credential can carry on a site, plus the platform operator who manages organizations and sites. */
export const SITE_ROLES = ['admin', 'dispatcher', 'driver', 'customer'] as const;
export type SiteRole = (typeof SITE_ROLES)[number];
export type Role = SiteRole | 'platform';

/**
 * The one permission table: every operation names one of these (or is public / open to any credential).
 * A role not listed for a permission gets 403.
 */
export const PERMISSIONS = {
  'organization.read': ['platform', 'admin'],
  'organization.manage': ['platform'],
  'site.read': ['platform', 'admin', 'dispatcher'],
  'site.create': ['platform'],
  'site.search': ['platform'],
  'site.update': ['platform', 'admin'],
  'user.read': ['platform', 'admin', 'dispatcher'],
  'user.manage': ['platform', 'admin'],
  'application.manage': ['admin'],
  'address.read': ['platform', 'admin', 'dispatcher', 'driver', 'customer'],
  'address.write': ['platform', 'admin', 'dispatcher', 'customer'],
  'address.search': ['platform', 'admin', 'dispatcher'],
  'audit.read': ['platform', 'admin'],
  // Everyone on a site reads the catalog (customers pick a service type and options when they book);
  // dispatchers run it day to day, so they may change it as well as admins.
  'catalog.read': ['admin', 'dispatcher', 'driver', 'customer'],
  'catalog.manage': ['admin', 'dispatcher'],
  'customer.read': ['admin', 'dispatcher'],
  'customer.manage': ['admin', 'dispatcher'],
  // Everyone on a site reads the definitions (the forms that fill custom fields need them); admins define them.
  'customfield.read': ['admin', 'dispatcher', 'driver', 'customer'],
  'customfield.manage': ['admin'],
  // Everyone uploads (drivers' proof photos, customers' documents); who sees which file is the engine's rule:
  // staff see the site's attachments, others only their own.
  'attachment.write': ['admin', 'dispatcher', 'driver', 'customer'],
  'attachment.read': ['admin', 'dispatcher', 'driver', 'customer'],
  'branding.manage': ['admin'],
  // Vehicles, teams and zones: drivers read them (their vehicle, their team, where they may not stop); customers
  // do not, since fleet and zone layout are internal (a refused job still names the banned zone it hit).
  // Dispatchers run the fleet day to day, so they manage it as well as admins.
  'fleet.read': ['admin', 'dispatcher', 'driver'],
  'fleet.manage': ['admin', 'dispatcher'],
  'mailbox.read': ['platform'],
  'workflow.read': ['admin', 'dispatcher', 'driver'],
  'workflow.manage': ['admin'],
  'job.read': ['admin', 'dispatcher', 'driver', 'customer'],
  'job.create': ['admin', 'dispatcher', 'customer'],
  'job.update': ['admin', 'dispatcher', 'customer'],
  'job.state': ['admin', 'dispatcher', 'driver', 'customer'],
  'job.bulk': ['admin', 'dispatcher'],
  'stop.update': ['admin', 'dispatcher'],
  // Drivers read the routes they drive (the engine filters); staff plan and edit them.
  'route.read': ['admin', 'dispatcher', 'driver'],
  'route.manage': ['admin', 'dispatcher'],
  // Drivers do not read worker records, their own included: `notes` are the office's, and the driver app gets
  // its own view of itself through the /driver operations.
  'worker.read': ['admin', 'dispatcher'],
  'worker.manage': ['admin', 'dispatcher'],
  // A driver's own actor (availability, position, their jobs): drivers only, since the user id comes from the
  // session; an API key acts as a service account, and staff change jobs through the job operations instead.
  'driver.self': ['driver'],
  // Staff follow every driver; a driver reads only their own position (the engine enforces it).
  'driver.location.read': ['admin', 'dispatcher', 'driver'],
  // Dispatch decisions and their explanations are the office's; drivers act through driver.self (accept, claim,
  // their pool) and never see how colleagues were ranked.
  'dispatch.read': ['admin', 'dispatcher'],
  'dispatch.manage': ['admin', 'dispatcher'],
  // Stored tracks and the live /dispatch socket feed: staff only (a driver streams on /driver and sees only their own).
  'driver.track.read': ['admin', 'dispatcher'],
  'realtime.dispatch': ['admin', 'dispatcher'],
  // Admins only, reads included: a subscription sends the site's data off-platform, and its URL is often a
  // credential in itself (chat and automation hooks carry a token in the path).
  'webhook.manage': ['admin'],
  // Routes and waypoint sequences for the site's own points: staff plan, drivers re-plan their day; customers do not
  // (each call can reach the site's paid routing engine).
  'gis.use': ['admin', 'dispatcher', 'driver'],
  // Integrations hold the site's provider credentials: admins only. The notification outbox shows message bodies.
  'integration.manage': ['admin'],
  'notification.read': ['admin'],
  // Customers manage their own saved payment methods (the engine scopes them to themselves); staff any customer's.
  'payment_method.manage': ['admin', 'dispatcher', 'customer'],
  // Pay rules and tips are the office's; drivers read their own earnings (the engine forces their id).
  'earnings.manage': ['admin', 'dispatcher'],
  'earnings.read': ['admin', 'dispatcher', 'driver'],
  // Every user of a site chats (rooms are private to their participants; the engine checks membership).
  'chat.use': ['admin', 'dispatcher', 'driver', 'customer'],
  // ETAs: staff read any job's, a customer their own job's, a driver the jobs assigned to them (the engine checks);
  // notification configs decide what customers receive, so admins manage them.
  'eta.read': ['admin', 'dispatcher', 'driver', 'customer'],
  'eta.manage': ['admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof PERMISSIONS;

/** `public`: no credential needed; `authenticated`: any valid credential. */
export type Access = Permission | 'public' | 'authenticated';

export function isAllowed(access: Access, role: Role): boolean {
  if (access === 'public' || access === 'authenticated') return true;
  return (PERMISSIONS[access] as readonly Role[]).includes(role);
}
