import type { Module } from '../module.ts'
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
}
