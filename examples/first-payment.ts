import { randomUUID } from 'node:crypto'
import { BankClient, OperatorClient, locateNatsUrl } from '../src/client/index.ts'
import {
  partnerNatsUser, rand, registrationNumber, requireSandbox, stepper, type Print,
} from './shared.ts'

// From nothing to a settled EFT: the bank's operator onboards a partner and funds it; the
// partner onboards a business customer and pays a supplier from the customer's account.
// Run it with `npm run example -- first-payment` while `npm start` runs in another terminal.

export async function main(env: NodeJS.ProcessEnv = process.env, print: Print = console.log) {
  const step = stepper(print)
  // The operator's client finds the bank as the CLI does: NATS_URL or .data/nats-url, and
  // BANK_OPERATOR_TOKEN or .data/operator-token.
  const ops = OperatorClient.fromEnv({ env })
  const url = locateNatsUrl(env)
  step('Connect as the operator', `NATS ${url.value} (${url.from})`)
  let bank: BankClient | undefined
  let natsUser = partnerNatsUser(null)
  try {
    // A sandbox only: in production the deposit below waits for a second operator.
    await requireSandbox(ops)
    const { partner, pool } = await onboardPartner(ops, step)

    // From here on the partner calls the bank with its own credential (and, on a NATS server
    // the bank is the authority of, as its own NATS user). A partner's program would read them
    // from BANK_PARTNER_ID, BANK_PARTNER_TOKEN and NATS_CREDS; this one hands them over.
    natsUser = partnerNatsUser(partner.nats_creds)
    bank = BankClient.fromEnv({ env: { ...env, BANK_PARTNER_ID: partner.partner_id,
      BANK_PARTNER_TOKEN: partner.credential.token, ...natsUser.env } })

    const account = await openCustomerAccount(ops, bank, pool, step)
    const eft = await payASupplier(bank, account, step)

    // The clearing cycle runs on a schedule; the operator can run one now.
    const cycle = await ops.clearing.run()
    step('Run a clearing cycle (operator)', `settled ${cycle.settled}, failed ${cycle.failed}`)

    const transaction = await showAfterClearing(bank, account, eft.tx_id, step)
    step('Done: the first payment is settled', `${transaction.status} ${transaction.tx_id}`)
    return { partnerId: partner.partner_id, accountId: account.account_id, txId: eft.tx_id,
      status: transaction.status }
  } finally {
    await bank?.close()
    await ops.close()
    natsUser.remove()
  }
}

type Step = ReturnType<typeof stepper>
type Account = { account_id: string; account_number: string }

/** The operator onboards a partner, approves its root entity and funds its pool account. */
async function onboardPartner(ops: OperatorClient, step: Step) {
  // The bank onboards a partner: its root business entity, a credential and a webhook secret.
  const partner = await ops.partners.create({
    name: 'Acme Holdings (Pty) Ltd',
    email: 'finance@acme.example',
    registration_number: registrationNumber(),
    trading_name: 'Acme',
  })
  step('Onboard a partner', `partner_id ${partner.partner_id}`,
    `root_entity_id ${partner.root_entity_id}`)

  // Approving the root entity (the bank's KYB decision) opens the partner's pool account.
  const root = await ops.entities.review({ entity_id: partner.root_entity_id,
    decision: 'approve' })
  const pool = root.account!
  step('Approve the root entity', `pool account ${pool.account_number} (${pool.account_id})`)

  // In a sandbox money arrives by an operator's deposit, as an inbound EFT would.
  const deposit = await ops.accounts.deposit({ account_id: pool.account_id, amount: 1_000_000,
    ref: 'seed' })
  step('Deposit into the pool account', `balance ${rand(deposit.balance)}`)
  return { partner, pool }
}

/** The partner onboards a business customer, the bank approves it, the pool funds its account. */
async function openCustomerAccount(ops: OperatorClient, bank: BankClient, pool: Account,
    step: Step): Promise<Account> {
  // The partner onboards a business customer; it waits for the bank's KYB review.
  const customer = await bank.entities.create({
    entity_type: 'business',
    email: 'accounts@corner-shop.example',
    country: 'ZAF',
    name: 'Corner Shop (Pty) Ltd',
    trading_name: 'Corner Shop',
    registration_number: registrationNumber(),
  })
  step('Create a business customer (as the partner)', `entity ${customer.id}`)

  // The bank approves it; the approval opens the customer's first account.
  const approved = await ops.entities.review({ entity_id: customer.id, decision: 'approve' })
  const account = approved.account!
  step('Approve the customer', `account ${account.account_number} (${account.account_id})`)

  // Fund the customer's account from the pool: an internal payment, settled at once.
  const funding = await bank.accounts.transferInternal({
    account_id: pool.account_id,
    clientTxId: randomUUID(),
    amount: 200_000,
    ref: 'Float',
    own_ref: 'Corner Shop float',
    account_number: account.account_number,
    name: 'Corner Shop (Pty) Ltd',
  })
  step('Move R2,000.00 from the pool to the customer', `tx ${funding.tx_id} ${funding.status}`)
  return account
}

/** The customer pays a supplier at another bank by EFT: held now, settled by clearing. */
async function payASupplier(bank: BankClient, account: Account, step: Step) {
  const eft = await bank.accounts.transfer({
    account_id: account.account_id,
    clientTxId: randomUUID(), // the partner's idempotency key: a retry with it pays once
    amount: 150_000,
    ref: 'INV-1001',
    own_ref: 'Supplier payment',
    name: 'Supplier (Pty) Ltd',
    account_number: '62000000001',
    branch_code: '250655',
  })
  step('Pay a supplier R1,500.00 by EFT', `tx ${eft.tx_id} ${eft.status}`)
  return eft
}

/** The EFT after clearing, and the customer's transactions; returns the EFT. */
async function showAfterClearing(bank: BankClient, account: Account, txId: string, step: Step) {
  const { transaction } = await bank.accounts.getTransaction({ tx_id: txId })
  step('The EFT after clearing', `${transaction.tx_payment_type} ${rand(transaction.amount)} ` +
    `fee ${rand(transaction.fee)}: ${transaction.status}`)

  const { transactions } = await bank.accounts.listTransactions({ account_id: account.account_id,
    limit: 10 })
  step(
    "The customer's transactions, newest first",
    ...transactions.map((t) => `${t.date} ${t.tx_type} ${t.tx_payment_type} ${t.status} ` +
      `credit ${rand(t.credit)} debit ${rand(t.debit)} balance ${rand(t.running_balance)}`),
  )
  return transaction
}
