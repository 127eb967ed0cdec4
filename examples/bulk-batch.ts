import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { BankClient, OperatorClient, verifyWebhook, type WebhookEvent } from '../src/client/index.ts'
import { onboardPartner, rand, requireSandbox, stepper, uniqueSuffix, type Print } from './shared.ts'

// A bulk batch from start to finish in the sandbox: a partner pays eleven recipients in
// one batch, confirms it with the one-time PIN the bank e-mailed (read here through the
// sandbox's operator subject), and follows it through signed webhooks to a receiver on
// this machine. One recipient is the simulated rail's declining account, to show a
// failed payment refunded. Run it with `npm run example -- bulk-batch`.

/**
 * How long to wait for the batch's last webhook (delivery is retried with backoff, so be generous).
 */
const completed_wait_ms_max = 120_000

export async function main(env: NodeJS.ProcessEnv = process.env, print: Print = console.log) {
  const step = stepper(print)
  const ops = OperatorClient.fromEnv({ env })
  let bank: BankClient | undefined
  let receiver: Receiver | undefined
  try {
    await requireSandbox(ops)
    const partner = await onboardPartner(ops, 'Payroll Co', 10_000_000)
    step('Onboard and fund a partner (operator)', `partner_id ${partner.partnerId}`,
      `pool account ${partner.poolAccountId}: ${rand(10_000_000)}`)
    bank = BankClient.fromEnv(
      { env: { ...env, BANK_PARTNER_ID: partner.partnerId, BANK_PARTNER_TOKEN: partner.token } })

    // 1. A receiver on a random local port that accepts only webhooks the bank signed
    //    with the partner's secret (shown once, when the partner was created).
    receiver = await startReceiver(partner.webhookSecret,
      (event) => print(`   webhook ${event.type} ${describe(event)}`))
    // http and loopback: the sandbox allows them
    await bank.webhooks.setEndpoint({ url: receiver.url })
    step('Start a webhook receiver and make it the partner\'s endpoint', receiver.url)

    const bulk_payment_id = await initiateSalaries(bank, partner.rootEntityId, step)

    // 3. The entity's user would read the PIN from the e-mail; the sandbox lets the operator read
    //    it.
    const { otp, expires_at } =
      await ops.sandbox.otp({ bulk_payment_id, partner_id: partner.partnerId })
    step('Read the one-time PIN (sandbox operator)', `${otp}, valid until ${expires_at}`)

    // 4. Verify: the batch is funded and paid; its webhooks follow.
    const verified = await bank.bulkPayments.verify({ entity_id: partner.rootEntityId,
      bulk_payment_id, otp })
    step('Verify the batch with the PIN', `status ${verified.status}`)

    const done = await receiver.waitFor((event) => event.type === 'bulk_payment.completed'
      && event.data.bulk_payment_id === bulk_payment_id, completed_wait_ms_max)
    step('Webhook bulk_payment.completed received', describe(done))

    const status = await bank.bulkPayments.status({ entity_id: partner.rootEntityId,
      bulk_payment_id })
    step(
      'The batch as status shows it',
      `${status.status}: ${status.successful_count} paid ` +
        `(${rand(status.successful_amount)}), ${status.failed_count} failed ` +
        `(${rand(status.failed_amount)})`,
      ...status.payments.filter((p) => p.status === 'failed').map((p) => `${p.payment_id} ` +
        `to ${p.recipient_name}: ${p.status} (${p.error_message ?? 'no reason given'})`),
    )
    step('Done: the batch is completed',
      `${status.status} ${bulk_payment_id}, ${receiver.events.length} signed webhooks received`)
    return { bulkPaymentId: bulk_payment_id, status: status.status, webhooks: receiver.events.map(
      (event) => event.type) }
  } finally {
    await receiver?.close()
    await bank?.close()
    await ops.close()
  }
}

/**
 * 2. Initiate: ten RTC payments and one to 4000000002, an account the simulated rail's
 *    bank declines. The total and every fee are held at once; the PIN goes by e-mail.
 *    Returns the batch's id.
 */
async function initiateSalaries(bank: BankClient, entity_id: string,
    step: ReturnType<typeof stepper>): Promise<string> {
  const payments = Array.from({ length: 11 }, (_, i) => ({
    payment_id: `line-${i + 1}`,
    amount: 25_000 + i * 100,
    ref: `Salary ${i + 1}`,
    own_ref: 'November salaries',
    account_number: i === 10 ? '4000000002' : '62000000001',
    branch_code: '250655',
    name: `Employee ${i + 1}`,
    real_time: true,
  }))
  const bulk_payment_id = `salaries-${uniqueSuffix()}`
  const total_amount = payments.reduce((sum, p) => sum + p.amount, 0)
  const initiated = await bank.bulkPayments.initiate({
    entity_id,
    bulk_payment_id,
    description: 'November salaries',
    payment_count: payments.length,
    total_amount,
    payments,
  })
  step('Initiate the batch', `${bulk_payment_id}: ${payments.length} ` +
    `payments, ${rand(total_amount)}, ${initiated.status}, PIN ` +
    `reference ${initiated.otp_reference}`)
  return bulk_payment_id
}

function describe(event: WebhookEvent): string {
  const data = event.data as { status?: string; payment_id?: string; bulk_payment_id?: string;
    successful_count?: number; failed_count?: number }
  // A payment's event names its payment; a batch's event carries the batch's counts.
  if (data.payment_id) return `${data.payment_id} ${data.status}`
  const counts = data.successful_count === undefined ? ''
    : ` (${data.successful_count} paid, ${data.failed_count} failed)`
  return `${data.bulk_payment_id ?? ''} ${data.status ?? ''}${counts}`
}

interface Receiver {
  url: string
  events: WebhookEvent[]
  waitFor(match: (event: WebhookEvent<Record<string, unknown>>) => boolean,
    limit_ms: number): Promise<WebhookEvent>
  close(): Promise<void>
}

/**
 * An HTTP server on 127.0.0.1 that verifies each webhook's signature and answers 204 (401 to a
 * forgery).
 */
async function startReceiver(secret: string,
    onEvent: (event: WebhookEvent) => void): Promise<Receiver> {
  const events: WebhookEvent[] = []
  const ids = new Set<string>()
  const waiters: Array<{ match: (event: WebhookEvent) => boolean; resolve(
    event: WebhookEvent): void }> = []
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      let event: WebhookEvent
      try {
        // The body exactly as it arrived: the signature covers these bytes.
        event = verifyWebhook(request.headers, Buffer.concat(chunks), secret)
      } catch {
        response.writeHead(401).end()
        return
      }
      response.writeHead(204).end()
      // The bank delivers at least once: a redelivery has the same webhook-id.
      const id = String(request.headers['webhook-id'])
      if (ids.has(id)) return
      ids.add(id)
      events.push(event)
      onEvent(event)
      for (const waiter of waiters.filter((w) => w.match(event))) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(event)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    events,
    waitFor(match, limit_ms) {
      const seen = events.find(match)
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching webhook within ${limit_ms / 1000} s`)), limit_ms)
        waiters.push({ match, resolve: (event) => (clearTimeout(timer), resolve(event)) })
      })
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
