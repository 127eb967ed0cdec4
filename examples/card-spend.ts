import { BankApiError, BankClient, OperatorClient } from '../src/client/index.ts'
import {
  onboardPartner,
  rand,
  registrationNumber,
  requireSandbox,
  stepper,
  type Print,
} from './shared.ts'

// A virtual card from its request to a refund: a partner's business customer asks for a card
// for one of its people, another of them approves it (four eyes), and the card pays at a
// cafe. The sandbox's card network, played by the bank's operator, authorizes the payment
// (a hold), declines one over the card's limit, clears the first with a tip added and
// refunds part of it. Run it with `npm run example -- card-spend` while `npm start` runs in
// another terminal (docs/guides/cards.md explains each step).

type Step = ReturnType<typeof stepper>

/** A cafe's payment at its till, by chip: what the network asks the bank to authorize. */
const till = { mcc: '5812', merchant_country: 'ZAF', channel: 'pos', entry_mode: 'chip' } as const
const cafe = 'Corner Cafe'

export async function main(env: NodeJS.ProcessEnv = process.env, print: Print = console.log) {
  const step = stepper(print)
  const ops = OperatorClient.fromEnv({ env })
  let bank: BankClient | undefined
  try {
    // A sandbox only: only a sandbox has a card network an operator can play.
    await requireSandbox(ops)
    const partner = await onboardPartner(ops, 'Card Co', 0)
    step('Onboard a partner (operator)', `partner_id ${partner.partnerId}`)
    bank = BankClient.fromEnv({
      env: { ...env, BANK_PARTNER_ID: partner.partnerId, BANK_PARTNER_TOKEN: partner.token },
    })
    const shop = await onboardCustomer(bank, ops, step)
    const card = await issueCard(bank, shop, step)
    const spent = await spend({ ...shop, ...card, bank, ops, step })
    const { balance } = await bank.accounts.getDetails({ account_id: shop.accountId })
    step('Done: the card has paid, been declined, cleared and refunded', `balance ${rand(balance)}`)
    return {
      partnerId: partner.partnerId,
      accountId: shop.accountId,
      cardId: card.cardId,
      ...spent,
    }
  } finally {
    await bank?.close()
    await ops.close()
  }
}

interface Customer {
  entityId: string
  accountId: string
  /** Who carries the card, and who approves it. */
  holderId: string
  approverId: string
}

/** A business customer with an account of R1,000.00 and two KYC-approved users. */
async function onboardCustomer(bank: BankClient, ops: OperatorClient, step: Step) {
  const entity = await bank.entities.create({
    entity_type: 'business',
    email: 'accounts@corner-shop.example',
    country: 'ZAF',
    name: 'Corner Shop (Pty) Ltd',
    trading_name: 'Corner Shop',
    registration_number: registrationNumber(),
  })
  // The bank approves the business (its KYB decision); that opens its first account.
  const { account } = await ops.entities.review({ entity_id: entity.id, decision: 'approve' })
  const accountId = account!.account_id
  // In a sandbox money arrives by an operator's deposit, as an inbound EFT would.
  await ops.accounts.deposit({ account_id: accountId, amount: 100_000, ref: 'float' })
  step('Onboard a business customer with R1,000.00', `entity ${entity.id}`, `account ${accountId}`)
  // A card's holder and its approver are users of the business whose KYC is approved; with
  // `verified: true` the partner vouches for its own KYC of them.
  const holder = await bank.users.create(person(entity.id, 'Thandi', 'Nkosi', '8804120140089'))
  const approver = await bank.users.create(person(entity.id, 'Sipho', 'Dlamini', '8506305008086'))
  step('Add two users of the business', `holder ${holder.userId}`, `approver ${approver.userId}`)
  return { entityId: entity.id, accountId, holderId: holder.userId, approverId: approver.userId }
}

/** A South African ID number begins with its holder's date of birth, YYMMDD. */
function birthDate(id_number: string): string {
  const [yy, mm, dd] = [0, 2, 4].map((at) => id_number.slice(at, at + 2))
  return `19${yy}-${mm}-${dd}T00:00:00Z`
}

function person(entity_id: string, first_name: string, last_name: string, id_number: string) {
  return {
    entity_id,
    first_name,
    last_name,
    email: `${first_name.toLowerCase()}@corner-shop.example`,
    phone_number: '+27821234567',
    gender: 'female',
    date_of_birth: birthDate(id_number),
    country: 'ZAF',
    city: 'Cape Town',
    residency: 'citizen',
    id_number,
    id_type: 'National',
    id_issue_date: '2010-03-01T00:00:00Z',
    title: 'Ms',
    verified: true,
  } as const
}

/** Requests a virtual card with a R500.00 limit a transaction, and has it approved. */
async function issueCard(bank: BankClient, c: Customer, step: Step) {
  const request = await bank.cards.request({
    account_id: c.accountId,
    user_id: c.holderId,
    name: 'Thandi travel',
    type: 0, // virtual (1: physical, inactive until the holder activates it)
    use_type: 0, // reusable (1: single use, cancelled by its first clearing)
    limits: { transaction_enabled: true, transaction: 50_000 },
  })
  step('Request a virtual card, R500.00 at most a transaction', `request ${request.id}: pending`)
  const respond = (initiator: string) =>
    bank.cards.respondToRequest({
      entity_id: c.entityId,
      account_id: c.accountId,
      initiator,
      request_id: request.id,
      approved: true,
    })
  // Four eyes: the holder may not approve her own card; another user of the business may.
  const refused = await respond(c.holderId).catch((error: unknown) => error)
  if (!(refused instanceof BankApiError)) throw new Error('the holder approved her own card')
  await respond(c.approverId)
  const { cards } = await bank.cards.list({ entity_id: c.entityId, account_id: c.accountId })
  const card = cards.find((listed) => listed.name === 'Thandi travel')!
  step(
    'Approve it as the other user (four eyes)',
    `the holder herself may not: ${refused.code} ${refused.message}`,
    `card ${card.id} ending ${card.last_4}: ${card.status}`,
  )
  return { cardId: card.id, last4: card.last_4 }
}

type Spending = Customer & { cardId: string; bank: BankClient; ops: OperatorClient; step: Step }

/** The account's balance and what is available of it (the balance less the holds). */
async function funds(s: Spending): Promise<string> {
  const details = await s.bank.accounts.getDetails({ account_id: s.accountId })
  return `balance ${rand(details.balance)}, available ${rand(details.available_balance)}`
}

/** The card pays, is declined over its limit, is cleared with a tip and refunded. */
async function spend(s: Spending) {
  const network = s.ops.cardNetwork
  // The card network asks the bank to authorize a payment: approved, the amount is held.
  const pay = (amount: number, merchant_name: string) =>
    network.authorize({ card_id: s.cardId, amount, merchant_name, ...till })
  const auth = await pay(12_050, cafe)
  s.step(`Pay R120.50 at ${cafe}`, `${auth.status}: held ${rand(auth.held)}`, await funds(s))
  // Over the card's R500.00 a transaction: declined, and nothing moves.
  const declined = await pay(80_000, 'Tech Store')
  const why = `approved ${declined.approved}: ${declined.decline_reason}`
  s.step('Pay R800.00 at Tech Store, over the limit', why)
  // The cafe clears more than it authorized (a tip, at most 15 % over): the Pending row posts
  // the R120.50 first authorized, and an adjustment row the R15.00 more.
  const { authorization_id } = auth
  const cleared = await network.clear({ authorization_id, amount: 13_550 })
  const clearing = `${cleared.status}: ${rand(cleared.cleared)}`
  s.step('The cafe clears R135.50, a tip added', clearing, await funds(s))
  const refund = await network.refund({ card_id: s.cardId, amount: 3_550, merchant_name: cafe })
  s.step('The cafe refunds R35.50', `tx ${refund.tx_id}`, await funds(s))
  await listTransactions(s)
  return {
    declineReason: declined.decline_reason,
    cleared: cleared.cleared,
    refundTxId: refund.tx_id,
  }
}

/** Card rows: tx_type card (refund for a refund), the merchant and the card's last four. */
async function listTransactions(s: Spending): Promise<void> {
  const page = await s.bank.accounts.listTransactions({ account_id: s.accountId, limit: 10 })
  const line = (t: (typeof page.transactions)[number]) =>
    [
      `${t.tx_type} ${t.tx_payment_type} ${t.status}`,
      t.recipient_name ? `${t.recipient_name} ref ${t.ref}` : `ref ${t.ref}`,
      `credit ${rand(t.credit)} debit ${rand(t.debit)}`,
      t.parent_tx_id ? '(adjustment)' : '',
    ]
      .join(' ')
      .trim()
  s.step("The account's transactions, newest first", ...page.transactions.map(line))
}
