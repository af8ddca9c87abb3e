import { monotonicUlidFactory } from './monotonic-ulid.ts';

const nextUlid = monotonicUlidFactory();

/** Id prefixes by kind: opaque, sortable, never sequential integers. */
export const ID_PREFIXES = {
  organization: 'org',
  site: 'site',
  user: 'usr',
  profile: 'prof',
  application: 'app',
  address: 'adr',
  accessToken: 'atk',
  refreshToken: 'rtk',
  session: 'ses',
  ticket: 'tkt',
  mail: 'mail',
  audit: 'aud',
  workflow: 'wfl',
  workflowState: 'wfs',
  job: 'job',
  stop: 'stp',
  outbox: 'obx',
  webhook: 'whk',
  webhookDelivery: 'whd',
  webhookPing: 'whp',
  serviceType: 'svt',
  option: 'opt',
  vehicle: 'veh',
  team: 'team',
  zone: 'zone',
  integration: 'int',
  notification: 'ntf',
  paymentMethod: 'pmt',
  route: 'rte',
  customField: 'cfd',
  attachment: 'att',
  earningsRule: 'ern',
  driverEarning: 'dre',
  chatRoom: 'room',
  chatMessage: 'msg',
  etaConfig: 'etac',
  etaTemplate: 'etpl',
  etaSent: 'etas',
  dispatch: 'dsp',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** A new prefixed ULID, e.g. `usr_01JD3...`. */
export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${nextUlid()}`;
}
