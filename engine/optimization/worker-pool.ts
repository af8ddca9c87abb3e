import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DomainError } from '../domain-error.ts';
import type { RoutingOptions, RoutingProblem, RoutingSolution } from './routing-problem.ts';
import type { SolveFailure, SolveRequest } from './solve-worker.ts';

/**
 * A small pool of worker threads running `solveRoutes`, so a request that optimizes for a second leaves the event
 * loop free for every other request (measured in the README, "Route optimization"). At most two threads and never
 * more than the cores minus one; further calls wait their turn in order. Threads start on first use, stay warm,
 * and do not keep the process alive (`unref`).
 */
const POOL_SIZE = Math.max(1, Math.min(2, availableParallelism() - 1));
/** Past the budget, how long a worker may take (its first start loads the TypeScript modules) before it is killed. */
const GRACE_MS = 15_000;

/**
 * The thread's entry is TypeScript: tsx's namespaced loader imports it, so it works the same under `node --import
 * tsx` (the server) and under the test runner (which does not hand its loader to threads).
 */
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.tsxApi).then(({ register }) => register({ namespace: 'optimizer-worker' }).import(workerData.entry, workerData.entry));
`;
const require = createRequire(import.meta.url);
const workerData = {
  // `require.resolve` finds the CommonJS build of tsx's API; its ES module build (the one that registers an ESM
  // loader correctly when imported) sits beside it.
  tsxApi: pathToFileURL(require.resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href,
  entry: new URL('./solve-worker.ts', import.meta.url).href,
};

type Task = { request: Omit<SolveRequest, 'id'>; resolve: (solution: RoutingSolution) => void; reject: (error: Error) => void };
type Answer = { id: number; solution?: RoutingSolution; failure?: SolveFailure };

const idle: Worker[] = [];
const queue: Task[] = [];
let running = 0;
let nextId = 1;

/**
 * `solveRoutes` on a worker thread: the same answer (same seed and iterations → same solution), off the event loop.
 * @throws DomainError as solveRoutes does (400 INVALID_ROUTING_PROBLEM / INVALID_ROUTING_OPTIONS naming the field);
 *   Error when the thread dies or overruns its budget by GRACE_MS
 */
export function solveInWorker(problem: RoutingProblem, options: RoutingOptions): Promise<RoutingSolution> {
  return new Promise((resolve, reject) => {
    queue.push({ request: { problem, options }, resolve, reject });
    drain();
  });
}

/** Stops the idle threads, for shutdown and tests (a busy one is unref'd: it never holds the process open). */
export async function closeOptimizerPool(): Promise<void> {
  await Promise.all(idle.splice(0).map((worker) => worker.terminate()));
}

function drain(): void {
  while (queue.length > 0 && (idle.length > 0 || running < POOL_SIZE)) {
    const task = queue.shift()!;
    const worker = idle.pop() ?? spawn();
    run(worker, task);
  }
}

function spawn(): Worker {
  const worker = new Worker(BOOTSTRAP, { eval: true, workerData });
  worker.unref();
  return worker;
}

function run(worker: Worker, task: Task): void {
  running++;
  const id = nextId++;
  let settled = false;
  const finish = (keep: boolean) => {
    settled = true;
    clearTimeout(watchdog);
    worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    running--;
    if (keep) idle.push(worker);
    else void worker.terminate();
    drain();
  };
  const onMessage = (answer: Answer) => {
    if (answer.id !== id) return;
    finish(true);
    if (answer.solution) task.resolve(answer.solution);
    else task.reject(toError(answer.failure!));
  };
  const onError = (error: Error) => {
    if (settled) return;
    finish(false);
    task.reject(new Error(`optimizer worker failed: ${error.message}`));
  };
  const onExit = (code: number) => onError(new Error(`exited with code ${code}`));
  const watchdog = setTimeout(() => onError(new Error(`no answer ${GRACE_MS} ms past its ${task.request.options.timeBudgetMs} ms budget`)), task.request.options.timeBudgetMs + GRACE_MS);
  watchdog.unref();
  worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  // Copied, nothing transferred (the empty list also tells the linter this is not window.postMessage).
  worker.postMessage({ id, ...task.request } satisfies SolveRequest, []);
}

function toError(failure: SolveFailure): Error {
  if (!failure.domain) return new Error(failure.message);
  const { status, code, field, details } = failure.domain;
  return new DomainError(status, code, failure.message, field, details);
}
