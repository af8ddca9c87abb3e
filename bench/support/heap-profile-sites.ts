import { readFileSync } from 'node:fs';

/**
 * Where a timed series allocates: reads a sampling heap profile that `bench/dispatch.ts` wrote with
 * `BENCH_HEAP_PROFILE=<prefix>` (`<prefix>-1000-eta.heapprofile`, ...) and prints the KB allocated per dispatch by
 * the allocating function (its self size, summed over every call path), largest first. The profile counts what
 * minor and major GCs collected too, so these are allocations, not what stays alive.
 *
 *   node --import tsx bench/support/heap-profile-sites.ts <file> <dispatches in the series> [functions]
 */
type Frame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { callFrame: Frame; selfSize: number; children: ProfileNode[] };

const [file, dispatchesArgument, topArgument] = process.argv.slice(2);
if (!file || !dispatchesArgument) throw new Error('usage: heap-profile-sites.ts <profile file> <dispatches> [functions]');
const dispatches = Number(dispatchesArgument);
const top = Number(topArgument ?? 25);
const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode };

const bySite = new Map<string, number>();
let total = 0;
const visit = (node: ProfileNode): void => {
  const { functionName, url, lineNumber } = node.callFrame;
  // node_modules paths shortened to the package; our files to their path inside the project.
  const place = url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(app|bench|engine|http|machines|mcp|persistence|realtime|sim)\//, '$1/');
  // tsx's output keeps no line numbers worth printing (a function's line is often 0): the file names the place.
  const site = `${functionName || '(anonymous)'} ${place ? `${place}${lineNumber > 0 ? `:${lineNumber + 1}` : ''}` : '(native)'}`;
  bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  total += node.selfSize;
  for (const child of node.children) visit(child);
};
visit(head);

const out = (line: string) => process.stdout.write(`${line}\n`);
const kb = (bytes: number) => (bytes / 1024 / dispatches).toFixed(1).padStart(7);
out(`${kb(total)} KB per dispatch in all (${dispatches} dispatches)`);
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top)) out(`${kb(bytes)}  ${site}`);
