import { randomUUID } from 'node:crypto'
import { BankClient, OperatorClient } from '../src/client/index.ts'
import { onboardPartner, rand, requireSandbox, stepper, uniqueSuffix, waitFor, type Print } from './shared.ts'

// A monthly debit order in the sandbox: a partner registers a debtor's mandate, schedules
// a monthly collection of R150 and watches two months of collections in a minute, moving
// its own sandbox clock to each collection day instead of waiting. Run it with
// `npm run example -- debit-order`. Each run onboards a partner of its own and moves only
// that partner's clock (about seven weeks): the bank's clock and every other partner's
// stay where they are.

/**
 * The simulated debit rail's always-collecting debtor account (README, The simulated debit rail).
 */
const debtor = { account_holder_name: 'Thandi Nkosi', account_number: '5000000000',
  account_type: 'cheque', branch_code: '250655' } as const
/** At most this many collections are followed (the order below has two). */
const collections_max = 3

export async function main(env: NodeJS.ProcessEnv = process.env, print: Print = console.log) {
  const step = stepper(print)
  const ops = OperatorClient.fromEnv({ env })
  let bank: BankClient | undefined
  try {
    await requireSandbox(ops)
    const partner = await onboardPartner(ops, 'Gym Co', 0)
    step('Onboard a partner (operator)', `partner_id ${partner.partnerId}`,
      `pool account ${partner.poolAccountId}: collections are credited here`)
    bank = BankClient.fromEnv(
      { env: { ...env, BANK_PARTNER_ID: partner.partnerId, BANK_PARTNER_TOKEN: partner.token } })
    // Dates come from the partner's sandbox clock (the bank's, for a new partner), not this
    // machine's: the bank's clock may have been moved.
    const { now } = await bank.sandbox.clock()
    step('Read your sandbox clock', now)
    const entity_id = partner.rootEntityId

    const mandate_reference = await registerMandate(bank, entity_id, step)
    const order = await scheduleOrder(bank, entity_id, mandate_reference, sastDate(now), step)
    await followCollections(bank, entity_id, order, step)

    // 4. The credits on the pool account, and the order's history.
    const { transactions } = await bank.accounts.listTransactions(
      { account_id: partner.poolAccountId })
    step(
      'The collections on the pool account, oldest first',
      ...transactions
        .filter((t) => t.tx_type === 'debit_order')
        .reverse()
        .map((t) => `${t.date} ${t.status} amount ${rand(t.amount)} fee ${rand(t.fee)} ` +
          `credit ${rand(t.credit)} balance ${rand(t.running_balance)}`),
    )
    const final = await bank.debitOrders.status({ entity_id, debit_order_id: order.debit_order_id })
    step('The order\'s history',
      ...final.status_history.map((h) => `${h.timestamp} ${h.status}: ${h.description}`))
    step('Done: the debit order has run its course', `${final.status} ${order.debit_order_id}`)
    return { debitOrderId: order.debit_order_id, status: final.status,
      collections: transactions.filter((t) => t.tx_type === 'debit_order').length }
  } finally {
    await bank?.close()
    await ops.close()
  }
}

type Step = ReturnType<typeof stepper>

/**
 * 1. The debtor's mandate: monthly, up to R500. The debtor's bank (the simulated debit
 *    rail) authenticates it in the bank's background work, at once. Returns its reference.
 */
async function registerMandate(bank: BankClient, entity_id: string, step: Step) {
  const mandate_reference = `GYM-${uniqueSuffix()}`
  const pending = await bank.mandates.create({ entity_id, mandate_reference, ...debtor,
    max_amount: 50_000, frequency: 'monthly' })
  step('Register a mandate', `${mandate_reference}: ${pending.status}`)
  const mandate = await waitFor('the mandate to be authenticated', async () => {
    const current = await bank.mandates.get({ entity_id, mandate_reference })
    return current.status === 'pending_authentication' ? undefined : current
  })
  if (mandate.status !== 'active') throw new Error(
    `the debtor's bank did not accept the mandate: ${mandate.status}`)
  step("The debtor's bank authenticated it", `${mandate.mandate_reference}: ${mandate.status}`)
  return mandate_reference
}

/**
 * 2. A monthly order of R150, first collected a week from the bank's today (at least two
 *    business days ahead), ending after the second month's collection.
 */
async function scheduleOrder(bank: BankClient, entity_id: string, mandate_reference: string,
    today: string, step: Step) {
  const first = addDays(today, 7)
  const order = await bank.debitOrders.create({
    entity_id,
    clientTxId: randomUUID(),
    mandate_reference,
    ...debtor,
    amount: 15_000,
    collection_date: first,
    reference: 'Gym membership',
    frequency: 'monthly',
    end_date: addDays(first, 40),
  })
  const moved = order.collection_date === first ? ''
    : ` (asked for ${first}, not a business day)`
  step('Schedule a monthly debit order',
    `${order.debit_order_id}: ${order.status}, first collection ${order.collection_date}${moved}`)
  return order
}

/**
 * 3. Move the partner's clock to 06:00 SAST of each collection day: the advance runs that
 *    day's 00:00 SAST collection run of the partner's orders, and its other work due on the
 *    way, before it answers.
 */
async function followCollections(bank: BankClient, entity_id: string,
    order: { debit_order_id: string; collection_date: string }, step: Step) {
  let next: string | null = order.collection_date
  for (let n = 1; next !== null && n <= collections_max; n++) {
    const moved = await bank.sandbox.advance({ to: `${next}T06:00:00+02:00` })
    const status = await bank.debitOrders.status(
      { entity_id, debit_order_id: order.debit_order_id })
    const collected = status.status_history.filter((h) => h.status === 'successful'
      || h.status === 'failed').at(-1)
    step(
      `Advance your clock to collection ${n}`,
      `now ${moved.now}, ${moved.jobs_run} jobs run on the way`,
      `${collected?.status ?? status.status}: ${collected?.description ?? ''}`,
    )
    const listed = await bank.debitOrders.list({ entity_id })
    next = listed.debit_orders.find((o) => o.debit_order_id === order.debit_order_id)
      ?.next_collection_date ?? null
  }
}

/** The South African calendar date (UTC+2, no daylight saving) of an instant. */
function sastDate(instant: string): string {
  return new Date(Date.parse(instant) + 2 * 3_600_000).toISOString().slice(0, 10)
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}
