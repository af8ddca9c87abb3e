import { Type } from 'typebox';
import { currentWorkflow, replaceWorkflow } from '../../engine/workflow/workflow.service.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import { WorkflowStateInput, WorkflowTransition } from '../../machines/workflow.schema.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, Id } from '../schemas/common.schema.ts';
import { requireSite } from '../tenancy.ts';

const EntityTypeSchema = Type.Union([Type.Literal('job'), Type.Literal('stop'), Type.Literal('route')]);

const WorkflowResponse = Type.Object(
  {
    id: Id,
    entity_type: EntityTypeSchema,
    version: Type.Integer(),
    states: Type.Array(Type.Object({ ...WorkflowStateInput.properties, id: Id }, { additionalProperties: false })),
    transitions: Type.Array(WorkflowTransition),
  },
  { additionalProperties: false },
);

function toWorkflowResponse(w: Workflow) {
  return { id: w.id, entity_type: w.entityType, version: w.version, states: w.states, transitions: w.transitions };
}

export const workflowOperations = [
  defineOperation({
    id: 'workflow.get',
    method: 'GET',
    path: '/workflow',
    summary: "The site's current workflow for jobs, stops or routes: states (each in a phase) and the transition table",
    tag: 'Workflows',
    access: 'workflow.read',
    host: 'site',
    query: Type.Object({ entity_type: EntityTypeSchema }, { additionalProperties: false }),
    response: DataResponse(WorkflowResponse),
    handler: async ({ query, transaction }) => ({ data: toWorkflowResponse(await transaction((em) => currentWorkflow(em, query.entity_type))) }),
  }),
  defineOperation({
    id: 'workflow.update',
    method: 'PUT',
    path: '/workflow',
    summary: 'Write a new version of a workflow; running entities keep the version they started with',
    description:
      'Keep a state by sending its id (once); states without an id are new. Refused (400 INVALID_WORKFLOW, `fields` naming each ' +
      'field at fault, e.g. `states.1.id`, `transitions.0.to`) without exactly one initial state, with a state key or id used twice, ' +
      'a move naming an unknown state, a terminal state that has outgoing moves, an unreachable state, or a phase without a state.',
    tag: 'Workflows',
    access: 'workflow.manage',
    host: 'site',
    body: Type.Object(
      {
        entity_type: EntityTypeSchema,
        states: Type.Array(WorkflowStateInput, { minItems: 1, maxItems: 50 }),
        transitions: Type.Array(WorkflowTransition, { maxItems: 500 }),
      },
      { additionalProperties: false },
    ),
    response: DataResponse(WorkflowResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toWorkflowResponse(await transaction((em) => replaceWorkflow(em, actor, requireSite(site).id, body.entity_type, body.states, body.transitions))),
    }),
  }),
];
