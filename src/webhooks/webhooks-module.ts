import type { Module } from '../module.ts'
import { webhooksMigration } from './webhook-migration.ts'
import { webhookJobSharesMigration } from './webhook-share-migration.ts'

// Webhooks: partners' endpoints, signed deliveries.
export const webhooksModule: Module = {
  name: 'webhooks',
  migrations: {
    '0008_webhooks': webhooksMigration,
    '0023_webhook_job_shares': webhookJobSharesMigration,
  },
}
