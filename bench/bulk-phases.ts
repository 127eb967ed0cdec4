// The bulk-payment and webhook phases of `npm run bench` (bench/run.ts): the time to take
// a 1000-payment batch (initiate), the time from verify until a 1000-payment RTC batch is
// `completed`, and the rate at which the batches' events reach a local webhook receiver.
// The service runs in sandbox mode for these, so that the operator can read the OTP and a
// loopback http:// receiver is an allowed endpoint.
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { BankClient, OperatorClient } from '../src/client/index.ts'

const batch_payments = 1000
/** Batches verified together for the webhook rate: one resource's events go one at a time. */
const webhook_batches = 4

export interface BulkFigures {
  bulk_initiate_ms: number
  bulk_complete_ms: number
  webhooks_per_s: number
  webhooks_e2e_per_s: number
  webhook_events: number
}

export async function bulkPhases(client: BankClient, operator: OperatorClient,
    entityId: string): Promise<BulkFigures> {
  const receiver = await startReceiver()
  try {
    await client.webhooks.setEndpoint({ url: receiver.url })
    // 1. initiate: the mean of three 1000-payment batches (each cancelled afterwards).
    const initiateTimes: number[] = []
    for (let i = 0; i < 3; i++) {
      const request = batch(entityId, false)
      const t0 = performance.now()
      await client.bulkPayments.initiate(request)
      initiateTimes.push(performance.now() - t0)
      await client.bulkPayments.cancel(
        { entity_id: entityId, bulk_payment_id: request.bulk_payment_id })
    }
    // 2. verify → completed for one RTC batch.
    const one = await initiated(client, operator, entityId)
    const t0 = performance.now()
    await client.bulkPayments.verify({ entity_id: entityId, bulk_payment_id: one.id, otp: one.otp })
    await completed(client, entityId, one.id)
    const completeMs = performance.now() - t0
    // 3. webhooks: several batches at once; each one's events (verified, one per payment,
    //    completed) counted at the receiver. The receiver holds its first requests
    //    unanswered until every batch is completed, so the events stand queued; from its
    //    release, the rate is the delivery's alone (webhooks_per_s). From verify to the
    //    last event, it includes paying the batches (webhooks_e2e_per_s).
    const many = await Promise.all(Array.from({ length: webhook_batches },
      () => initiated(client, operator, entityId)))
    receiver.hold()
    const w0 = performance.now()
    await Promise.all(many.map((b) => client.bulkPayments.verify(
      { entity_id: entityId, bulk_payment_id: b.id, otp: b.otp })))
    await Promise.all(many.map((b) => completed(client, entityId, b.id)))
    const r0 = performance.now()
    receiver.release()
    await Promise.all(many.map((b) => receiver.until(b.id, batch_payments + 2)))
    const end = performance.now()
    const events = webhook_batches * (batch_payments + 2)
    return {
      bulk_initiate_ms: round(initiateTimes.reduce((a, b) => a + b, 0) / initiateTimes.length),
      bulk_complete_ms: round(completeMs),
      webhooks_per_s: Math.round(events / ((end - r0) / 1000)),
      webhooks_e2e_per_s: Math.round(events / ((end - w0) / 1000)),
      webhook_events: events,
    }
  } finally {
    await receiver.close()
  }
}

function batch(entityId: string, realTime: boolean) {
  const payments = Array.from({ length: batch_payments }, (_, i) => ({
    payment_id: `p${i}`,
    amount: 100 + i,
    ref: `bench ${i}`,
    own_ref: 'bench bulk',
    account_number: '62000000001',
    branch_code: '250655',
    name: 'Bench Recipient',
    real_time: realTime,
  }))
  return {
    entity_id: entityId,
    bulk_payment_id: `bench-${randomUUID()}`,
    total_amount: payments.reduce((sum, p) => sum + p.amount, 0),
    payment_count: payments.length,
    description: 'bench batch',
    payments,
  }
}

async function initiated(client: BankClient, operator: OperatorClient, entityId: string) {
  const request = batch(entityId, true)
  await client.bulkPayments.initiate(request)
  const { otp } = await operator.sandbox.otp({ bulk_payment_id: request.bulk_payment_id,
    partner_id: client.partnerId })
  return { id: request.bulk_payment_id, otp }
}

async function completed(client: BankClient, entityId: string, id: string): Promise<void> {
  for (;;) {
    const status = await client.bulkPayments.status({ entity_id: entityId, bulk_payment_id: id })
    if (status.status === 'completed') return
    if (status.status !== 'processing') throw new Error(`batch ${id} ended ${status.status}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/**
 * A webhook receiver on loopback that answers 204 (or, while held, nothing yet) and counts the
 * events of each batch.
 */
async function startReceiver() {
  const events = receivedEvents()
  let held: Array<() => void> | undefined
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      if (held) return held.push(() => answer())
      answer()
    })
    const answer = () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        data?: { bulk_payment_id?: string } }
      const batchId = body.data?.bulk_payment_id ?? ''
      response.writeHead(204).end()
      events.record(batchId, String(request.headers['webhook-id']))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    hold: () => {
      held = []
    },
    release: () => {
      const waiting = held ?? []
      held = undefined
      for (const answer of waiting) answer()
    },
    until: events.until,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** The receiver's count of each batch's events (by webhook id), and waits for a count. */
function receivedEvents() {
  const received = new Map<string, Set<string>>()
  const countOf = (batchId: string) => received.get(batchId)?.size ?? 0
  const waiters: Array<{ batchId: string; at: number; resolve: () => void }> = []
  return {
    record: (batchId: string, webhookId: string) => {
      const ids = received.get(batchId) ?? new Set<string>()
      ids.add(webhookId)
      received.set(batchId, ids)
      for (const w of waiters.filter((w) => countOf(w.batchId) >= w.at)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
    },
    until: (batchId: string, at: number) =>
      countOf(batchId) >= at
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`the receiver got ` +
              `${countOf(batchId)} of ${at} events of ${batchId} in 120 s`)), 120_000)
            waiters.push({ batchId, at, resolve: () => (clearTimeout(timer), resolve()) })
          }),
  }
}

function round(value: number): number {
  return Math.round(value * 10) / 10
}
