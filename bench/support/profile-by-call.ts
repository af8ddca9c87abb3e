import { readFileSync } from 'node:fs';

/**
 * Splits a CPU profile written by `bench/sim-calls.ts --cpu-profile <file>` by REST operation: its calls run one at a
 * time, so a sample taken between a call's start and end belongs to that call (samples between calls are the
 * simulator's own work and the loop's). Prints, per operation, the sampled milliseconds per call that were not idle,
 * split by where the time was spent (the sampled function's package, or our folder, or a native frame), and the
 * functions with most self time.
 *
 *   node --import tsx bench/support/profile-by-call.ts /tmp/calls.cpuprofile [functions per operation]
 */
type Frame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: Frame; children?: number[] };
type Profile = { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] };
type Span = [name: string, startUs: number, endUs: number];
type Share = { ms: number; calls: number; places: Map<string, number>; functions: Map<string, number>; callers: Map<string, number> };

const [file, topArgument] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-by-call.ts <profile file> [functions per operation]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const spans = (JSON.parse(readFileSync(`${file}.calls.json`, 'utf8')) as Span[]).sort((a, b) => a[1] - b[1]);
const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
const shares = new Map<string, Share>();
const shareOf = (name: string) => shares.get(name) ?? shares.set(name, { ms: 0, calls: 0, places: new Map(), functions: new Map(), callers: new Map() }).get(name)!;
for (const [name] of spans) shareOf(name).calls += 1;

let at = profile.startTime;
let span = 0;
for (let i = 0; i < profile.samples.length; i += 1) {
  // A sample's delta is the time since the one before: it stands for the interval that ends at it.
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  const frame = frames.get(profile.samples[i]!)!;
  if (frame.functionName === '(idle)') continue;
  while (span < spans.length && spans[span]![2] < at) span += 1;
  const current = spans[span];
  const name = current && current[1] <= at ? current[0] : '(between calls)';
  const share = shareOf(name);
  const ms = delta / 1000;
  share.ms += ms;
  add(share.places, placeOf(frame), ms);
  add(share.functions, nameOf(frame), ms);
  add(share.callers, ourCallerOf(profile.samples[i]!), ms);
}

const top = Number(topArgument ?? 12);
const out = (line: string) => process.stdout.write(`${line}\n`);
for (const [name, share] of [...shares].sort((a, b) => b[1].ms - a[1].ms)) {
  const perCall = share.calls > 0 ? ` (${share.calls} calls, ${(share.ms / share.calls).toFixed(2)} ms per call)` : '';
  out(`\n${name}: ${(share.ms / 1000).toFixed(2)} s sampled${perCall}`);
  out(`  by place: ${ranked(share.places, share.ms, 12).join(', ')}`);
  for (const line of ranked(share.functions, share.ms, top)) out(`    ${line}`);
  out('  by our nearest function on the stack (with what it called):');
  for (const line of ranked(share.callers, share.ms, top)) out(`    ${line}`);
}

function nameOf(frame: Frame): string {
  return `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
}

/** The innermost frame of our code on a sample's stack (an async continuation may have none). */
function ourCallerOf(nodeId: number): string {
  for (let id: number | undefined = nodeId; id !== undefined; id = parents.get(id)) {
    const frame = frames.get(id)!;
    if (frame.url && !frame.url.includes('node_modules') && !frame.url.startsWith('node:')) return nameOf(frame);
  }
  return '(none of ours)';
}

function add(map: Map<string, number>, key: string, ms: number): void {
  map.set(key, (map.get(key) ?? 0) + ms);
}

function ranked(map: Map<string, number>, total: number, count: number): string[] {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, ms]) => `${((100 * ms) / total).toFixed(1)}% ${key}`);
}

/** The package of a frame's file, `node:<module>` for Node's own, our top folder, or the native frame's name. */
function placeOf(frame: Frame): string {
  if (!frame.url) return `(${frame.functionName})`;
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url);
  if (dependency) return dependency[1]!;
  if (frame.url.startsWith('node:')) return `node:${frame.url.slice(5).split('/')[0]}`;
  const ours = /\/(engine|http|sim|persistence|machines|bench|app|realtime)\//.exec(frame.url);
  return ours ? ours[1]! : frame.url;
}
