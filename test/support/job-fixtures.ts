import type { ApiClient } from './http-client.ts';

export type JobBody = { id: string; customer_user_id: string; version: number; phase: string; workflow_state_id: string; workflow_state: { key: string }; stops: { id: string; phase: string; workflow_state: { key: string } }[] };

/** A valid two-stop job body (pickup and dropoff with inline addresses), with overrides. */
export function jobRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customer_email: 'buyer@shop.example',
    customer_first_name: 'Bea',
    stops: [
      { type: 'pickup', street_address: '10 Rue de Rivoli', city: 'Paris', point: { lat: 48.8556, lng: 2.3522 } },
      { type: 'dropoff', street_address: '5 Avenue Montaigne', city: 'Paris', point: { lat: 48.8662, lng: 2.3047 } },
    ],
    ...overrides,
  };
}

export async function createJob(client: ApiClient, overrides: Record<string, unknown> = {}): Promise<JobBody> {
  const response = await client.post<{ data: JobBody }>('/api/job', jobRequest(overrides));
  if (response.status !== 201) throw new Error(`job create failed: ${response.status} ${response.text}`);
  return response.body.data;
}

/** State ids of the site's current workflow, by key. */
export async function stateIds(client: ApiClient, entityType: 'job' | 'stop' | 'route'): Promise<Record<string, string>> {
  const response = await client.get<{ data: { states: { id: string; key: string }[] } }>(`/api/workflow?entity_type=${entityType}`);
  return Object.fromEntries(response.body.data.states.map((s) => [s.key, s.id]));
}
