import { randomBytes } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import { buildComparison } from './comparison.ts';
import { interpolate, round6, type LatLng } from './geo.ts';
import type { StrategyResult } from './metrics.ts';
import type { Plan } from './plan.ts';
import type { Timeline } from './run-context.ts';
import { createRecorder, type Recorder } from './recording.ts';
import { runStrategy } from './runner.ts';
import { setUpFleet, type FleetMember, type SiteFleet } from './setup-fleet.ts';
import type { Simulation } from './simulate.ts';
import { SiteApi } from './site-api.ts';
import { strategyAdapter, type StrategyName } from './strategies.ts';
import { httpTransport } from './transport.ts';

export type LiveOptions = {
  baseUrl: string;
  apiKey: string;
  /** Virtual seconds per wall second. */
  speed: number;
  /** Virtual seconds between streamed positions along a leg; 0 reports positions at stops only. */
  streamEveryS: number;
  onProgress?: (strategy: string, done: number) => void;
  record?: boolean;
};

/**
 * Drives a running server as its clients would: the office creates jobs and dispatches over REST with the given
 * key, each simulated driver signs in, keeps a socket.io connection on `/driver` and streams positions along its
 * legs, and answers offers, claims pool jobs and moves stops over REST. Virtual time runs `speed` times faster than
 * the wall clock. Each strategy gets its own team of new drivers on the site.
 */
export async function simulateLive(plan: Plan, strategies: StrategyName[], options: LiveOptions): Promise<Simulation> {
  const api = new SiteApi(httpTransport(options.baseUrl), options.apiKey);
  const results: [string, StrategyResult][] = [];
  const recorders: Recorder[] = [];
  const wallMs: Record<string, number> = {};
  for (const name of strategies) {
    const started = performance.now();
    const label = `live-${name}-${randomBytes(3).toString('hex')}`;
    const fleet = await setUpFleet(api, plan, label);
    const sockets = await connectDrivers(options.baseUrl, fleet);
    try {
      api.calls.clear();
      const recorder = options.record ? createRecorder(plan, name) : null;
      if (recorder) recorders.push(recorder);
      const result = await runStrategy({
        recorder,
        plan,
        api,
        fleet,
        strategy: strategyAdapter(name),
        timeline: liveTimeline(sockets, options),
        onProgress: (done) => options.onProgress?.(name, done),
      });
      results.push([name, result]);
    } finally {
      for (const socket of sockets.values()) socket.disconnect();
      await goOffline(api, fleet);
    }
    wallMs[name] = Math.round(performance.now() - started);
  }
  return { comparison: buildComparison(plan, results), recorders, wallMs };
}

function liveTimeline(sockets: Map<string, Socket>, options: LiveOptions): Timeline {
  const startWall = Date.now();
  const wallAt = (t: number) => startWall + (t / options.speed) * 1000;
  const send = (member: FleetMember, point: LatLng): Promise<void> =>
    new Promise((resolve, reject) => {
      const socket = sockets.get(member.userId)!;
      socket.timeout(10_000).emit('location', { lat: point.lat, lng: point.lng, recorded_at: new Date().toISOString() }, (error: Error | null, reply: { code?: string; error?: string }) => {
        if (error) reject(new Error(`location of ${member.name} was not acknowledged: ${error.message}`));
        else if (reply?.code) reject(new Error(`location of ${member.name} refused: ${reply.code} ${reply.error ?? ''}`));
        else resolve();
      });
    });
  return {
    async advanceTo(t) {
      const wait = wallAt(t) - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    },
    // The server's clock is the wall clock: a fix is stamped when it is sent.
    stamp: () => new Date().toISOString(),
    reportPosition: (member, point) => send(member, point),
    onLeg(member, from, to, departT, arriveT) {
      if (options.streamEveryS <= 0) return;
      for (let t = departT + options.streamEveryS; t < arriveT; t += options.streamEveryS) {
        const point = round6(interpolate(from, to, (t - departT) / (arriveT - departT)));
        // Positions along the way are fire-and-forget, as an app streaming GPS would send them.
        setTimeout(() => void send(member, point).catch(() => {}), Math.max(0, wallAt(t) - Date.now()));
      }
    },
  };
}

/** One `/driver` socket per driver, authenticated with the driver's access token on the site's host. */
async function connectDrivers(baseUrl: string, fleet: SiteFleet): Promise<Map<string, Socket>> {
  const url = new URL(baseUrl);
  const local = url.hostname.endsWith('.localhost');
  const target = local ? `${url.protocol}//127.0.0.1:${url.port || 80}` : url.origin;
  const sockets = new Map<string, Socket>();
  for (const member of fleet.members) {
    const socket = io(`${target}/driver`, {
      transports: ['websocket'],
      auth: { token: member.credential.accessToken },
      extraHeaders: { host: url.host },
      reconnection: true,
      forceNew: true,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', (error: Error & { data?: { code?: string } }) => reject(new Error(`driver ${member.name} could not connect: ${error.data?.code ?? error.message}`)));
    });
    sockets.set(member.userId, socket);
  }
  return sockets;
}

async function goOffline(api: SiteApi, fleet: SiteFleet): Promise<void> {
  for (const member of fleet.members) {
    await api.call('PUT', '/api/driver/status', { availability: 'offline' }, member.credential).catch(() => undefined);
  }
}
