import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'
import { webhook_deliver_job_kind } from './webhook-service.ts'
import { webhooksMigration } from './webhook-migration.ts'
import { webhookJobSharesMigration } from './webhook-share-migration.ts'
import { webhook_deliver_job_limits, webhook_limits_default } from './webhook-limits.ts'

// Webhooks: partners' endpoints, signed deliveries.
export const webhooksModule: Module = {
  name: 'webhooks',
  migrations: {
    '0008_webhooks': webhooksMigration,
    '0023_webhook_job_shares': webhookJobSharesMigration,
  },
  limits: {
    // Defaults: BANK_WEBHOOK_PARTNER_SLOTS_MAX overrides partner_slots_max (src/config.ts).
    ...webhook_limits_default,
    deliver_job: webhook_deliver_job_limits,
  },
  endpoints: (s) => [
    endpoint(contract.webhooks.setEndpoint, (r, c) => s.webhooks.setEndpoint(partnerOf(c), r.url)),
    endpoint(contract.webhooks.getEndpoint, (_r, c) => s.webhooks.getEndpoint(partnerOf(c))),
    endpoint(contract.webhooks.rotateSecret, (_r, c) => s.webhooks.rotateSecret(partnerOf(c))),
    endpoint(contract.webhooks.listDeliveries, (r, c) => s.webhooks.listDeliveries(partnerOf(c), r)),
    endpoint(contract.webhooks.redeliver, (r, c) => s.webhooks.redeliver(partnerOf(c), r.event_id)),
    endpoint(contract.webhooks.operatorDeliveries, (r) => s.webhooks.listAllDeliveries(r)),
    endpoint(contract.webhooks.operatorRedeliver, (r) => s.webhooks.redeliverForPartner(r.event_id)),
  ],
  jobKinds: [webhook_deliver_job_kind],
  subscriptions: ['*'],
}
