import { randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { BankClient } from '../../src/client/index.ts'
import { appendEvents, type NewEvent } from '../../src/events/index.ts'
import type { DeliveryView } from '../../src/webhooks/webhook-contract.ts'
import { businessEntity } from '../support/fixtures.ts'
import type { TestBank, TestPartner } from '../support/harness.ts'

// Webhook tests drive the bank by hand: the bank's own job runner is stopped, and a test
// hands events over and runs due jobs itself (deliverDue), moving tb.clock to make retries
// fall due. Webhooks go to real HTTP receivers on 127.0.0.1 that check every signature with
// the standardwebhooks library, as a partner's receiver would.

export interface Received {
  id: string
  timestamp: string
  signature: string
  contentType: string | undefined
  body: string
  /**
   * What Webhook.verify made of it with each of the receiver's secrets: the parsed body, or the
   * error.
   */
  verified: Array<unknown>
  status: number
}

export interface Receiver {
  url: string
  received: Received[]
  /** The secrets the receiver checks with (each one on its own). */
  secrets: string[]
  /** The status to answer for a webhook; 200 unless a test says otherwise. */
  respond: (webhookId: string) => number
  close(): Promise<void>
}

export async function startReceiver(secrets: string[] = []): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], secrets, respond: () => 200,
    close: async () => {} }
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const header = (name: string) => String(request.headers[name] ?? '')
      const id = header('webhook-id')
      const verified = receiver.secrets.map((secret) => {
        try {
          return new Webhook(secret).verify(body, {
            'webhook-id': id,
            'webhook-timestamp': header('webhook-timestamp'),
            'webhook-signature': header('webhook-signature'),
          })
        } catch (error) {
          return error
        }
      })
      const status = receiver.respond(id)
      receiver.received.push({
        id,
        timestamp: header('webhook-timestamp'),
        signature: header('webhook-signature'),
        contentType: request.headers['content-type'],
        body,
        verified,
        status,
      })
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok'
        : 'not now')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  receiver.url = `http://127.0.0.1:${port}/hooks`
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return receiver
}

export interface WebhookPartner extends TestPartner {
  /** The signing secret from the partner-create reply. */
  secret: string
}

/**
 * A partner with its signing secret and a receiver that checks that secret; with
 * `endpoint: true` the receiver is the partner's webhook endpoint. The caller closes the receiver.
 */
export async function partnerWithReceiver(tb: TestBank, options: { endpoint: boolean }): Promise<{
    partner: WebhookPartner; receiver: Receiver }> {
  const partner = await onboardWithSecret(tb)
  const receiver = await startReceiver([partner.secret])
  if (options.endpoint) await partner.client.webhooks.setEndpoint({ url: receiver.url })
  return { partner, receiver }
}

/** Onboards a partner and keeps the webhook secret its creation answered. */
export async function onboardWithSecret(tb: TestBank): Promise<WebhookPartner> {
  const root = businessEntity()
  const created = await tb.operator.partners.create({
    name: root.name,
    email: root.email,
    registration_number: root.registration_number,
    trading_name: root.trading_name,
  })
  return {
    partnerId: created.partner_id,
    rootEntityId: created.root_entity_id,
    credentialId: created.credential.id,
    token: created.credential.token,
    natsCreds: created.nats_creds,
    nc: tb.nc,
    client: new BankClient({ connection: tb.nc, token: created.credential.token,
      partnerId: created.partner_id }),
    secret: created.webhook_secret,
  }
}

/** An event of `partnerId` about `resourceId` (a batch id), happening now on the bank's clock. */
export function partnerEvent(tb: TestBank, partnerId: string, resourceId: string,
    overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    type: 'payment.success',
    partner_id: partnerId,
    resource_id: resourceId,
    data: { bulk_payment_id: resourceId, payment_id: randomUUID(), amount: '15000',
      status: 'successful' },
    occurred_at: tb.clock.now(),
    ...overrides,
  }
}

/** Appends events in one committed transaction, as a capability announcing a change would. */
export function appendCommitted(tb: TestBank, events: NewEvent[]): Promise<string[]> {
  return tb.bank.database.db.transaction().execute((trx) => appendEvents(trx, events))
}

/** Hands every pending event over and runs every job due now. */
export async function deliverDue(tb: TestBank): Promise<void> {
  while ((await tb.bank.services.events.dispatchPending()) > 0) {
    // Up to a batch per call; loop until the outbox is empty.
  }
  await tb.bank.services.jobRunner.runDue()
}

/** The partner's delivery of one event, as list_deliveries shows it. */
export async function deliveryOf(partner: TestPartner, eventId: string): Promise<DeliveryView> {
  for (let cursor: string | undefined, page = 0; page < 100; page++) {
    const reply = await partner.client.webhooks.listDeliveries(cursor ? { limit: 200, cursor }
      : { limit: 200 })
    const found = reply.deliveries.find((delivery) => delivery.event_id === eventId)
    if (found) return found
    if (!reply.next_cursor) break
    cursor = reply.next_cursor
  }
  throw new Error(`no delivery of event ${eventId}`)
}

export const resourceId = () => `bulk-${randomUUID()}`
