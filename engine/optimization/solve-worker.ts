/**
 * The body of an optimizer worker thread (see worker-pool.ts): solves one problem per message and answers with the
 * solution or the error, so the CPU-bound search never runs on the server's event loop.
 */
import { parentPort } from 'node:worker_threads';
import { DomainError } from '../domain-error.ts';
import type { RoutingOptions, RoutingProblem } from './routing-problem.ts';
import { solveRoutes } from './solve-routes.ts';

export type SolveRequest = { id: number; problem: RoutingProblem; options: RoutingOptions };

export type SolveFailure = { message: string; domain?: { status: DomainError['status']; code: string; field?: string; details?: Record<string, unknown> } };

/** Answers are copied (structured clone); the explicit empty transfer list also tells the linter this is not window.postMessage. */
const NOTHING_TO_TRANSFER: [] = [];

parentPort!.on('message', (request: SolveRequest) => {
  try {
    parentPort!.postMessage({ id: request.id, solution: solveRoutes(request.problem, request.options) }, NOTHING_TO_TRANSFER);
  } catch (error) {
    const failure: SolveFailure =
      error instanceof DomainError
        ? { message: error.message, domain: { status: error.status, code: error.code, field: error.field, details: error.details } }
        : { message: error instanceof Error ? error.message : String(error) };
    parentPort!.postMessage({ id: request.id, failure }, NOTHING_TO_TRANSFER);
  }
});
