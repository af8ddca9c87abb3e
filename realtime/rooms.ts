/**
 * Room names. Sockets are put in rooms by the server from the handshake's site and user only (there is no client
 * "join"), and every room name carries the site id, so no message addressed to one site can reach another.
 */
export const dispatchRoom = (siteId: string) => `site:${siteId}:dispatch`;
export const driverRoom = (siteId: string, userId: string) => `site:${siteId}:driver:${userId}`;
/** A dispatcher's or admin's own room on `/dispatch`: private messages (chat) addressed to that user. */
export const staffRoom = (siteId: string, userId: string) => `site:${siteId}:staff:${userId}`;
