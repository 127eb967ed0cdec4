import type { Module } from '../module.ts'
import { WebhookSecrets } from './webhook-secrets.ts'
import { HttpWebhookSender } from './webhook-sender.ts'
import { WebhookService } from './webhook-service.ts'
import type { WebhookTables } from './webhook-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'
import { webhook_deliver_job_kind } from './webhook-service.ts'
import { webhooksMigration } from './webhook-migration.ts'
import { webhookJobSharesMigration } from './webhook-share-migration.ts'
import { webhookBreakerMigration } from './webhook-breaker-migration.ts'
import { webhook_deliver_job_limits, webhook_limits_default } from './webhook-limits.ts'

/** What the module builds: its members of the bank's Services. */
export interface WebhookServices {
  /**
   * Signed webhooks of partner events (`svc.webhook.<partner_id>.*`, the `webhook.deliver`
   * jobs).
   */
  webhooks: WebhookService
  /** Webhook signing secrets, sealed with the bank's key (a partner's first at onboarding). */
  webhookSecrets: WebhookSecrets
}

// Webhooks: partners' endpoints, signed deliveries.
export const webhooksModule: Module<WebhookServices, WebhookTables> = {
  name: 'webhooks',
  reads: {
    partners: 'the operators\' delivery summary lists every partner, those with no delivery too',
  },
  needs: ['jobs', 'events'],
  services: (s, { db, clock, config }) => {
    const webhookSecrets = new WebhookSecrets(db, clock, s.secretBox)
    const sender = new HttpWebhookSender({ timeout_ms: webhook_limits_default.attempt_timeout_ms })
    const webhooks = new WebhookService(db, clock, s.jobRunner, s.events, webhookSecrets, sender, {
      sandbox: config.sandbox,
      limits: { ...webhook_limits_default, partner_slots_max: config.webhookPartnerSlotsMax,
        instance_slots: config.webhookConcurrency },
    })
    return { webhooks, webhookSecrets }
  },
  migrations: {
    '0008_webhooks': webhooksMigration,
    '0023_webhook_job_shares': webhookJobSharesMigration,
    '0049_webhook_endpoint_health': webhookBreakerMigration,
  },
  limits: {
    // Defaults: BANK_WEBHOOK_PARTNER_SLOTS_MAX overrides partner_slots_max, and
    // BANK_WEBHOOK_CONCURRENCY instance_slots (src/config.ts).
    ...webhook_limits_default,
    // The per-endpoint circuit breaker's thresholds (webhook-breaker.ts).
    breaker: { ...webhook_limits_default.breaker },
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
    endpoint(contract.webhooks.operatorEndpoints, (r) => s.webhooks.listEndpoints(r)),
    endpoint(contract.webhooks.operatorResumeEndpoint, (r) => s.webhooks.resumeEndpoint(r)),
  ],
  jobKinds: [webhook_deliver_job_kind],
  subscriptions: ['*'],
}
