import { randomInt } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { BankApiError, type OperatorClient } from '../src/client/index.ts'

// What the examples share: printing, unique values (so that every example can run again
// and again against the same bank), waiting for the bank's background work, and the
// onboarding of a partner that first-payment.ts shows step by step.
//
// The examples import the SDK by its path in this repository, so that they run wherever the
// repository is (also bundled, as the tests run them); a program of the partner's own imports
// the same module as the package `@partner-bank/client` (packages/client/README.md).

/** Where an example writes its lines: the console, or a test's list. */
export type Print = (line: string) => void

/** Prints numbered steps: `1. what`, then its details indented. */
export function stepper(print: Print): (what: string, ...details: string[]) => void {
  let n = 0
  return (what, ...details) => {
    print(`${++n}. ${what}`)
    for (const detail of details) print(`   ${detail}`)
  }
}

/** Integer cents (a number or the bank's decimal string) as rand: `R1,500.00`. */
export function rand(cents: number | string): string {
  const value = BigInt(cents)
  const sign = value < 0n ? '-' : ''
  const magnitude = value < 0n ? -value : value
  const whole = (magnitude / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${sign}R${whole}.${(magnitude % 100n).toString().padStart(2, '0')}`
}

let registrations = randomInt(100)

/**
 * A 12-digit company registration number no earlier run has used: registration numbers
 * are unique (409 otherwise), so a fixed one would make a second run fail. The time in
 * milliseconds tells runs apart (it repeats after 11 days), the counter the numbers of one run.
 */
export function registrationNumber(): string {
  registrations = (registrations + 1) % 100
  return `2${String(Date.now() % 1e9).padStart(9, '0')}${String(registrations).padStart(2, '0')}`
}

/** A short random suffix for the partner's own references (batch ids, mandate references). */
export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}${randomInt(36 ** 3).toString(36)}`.toUpperCase()
}

/** Polls `probe` every 200 ms until it answers something, for at most `limit_ms`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>,
    limit_ms = 60_000): Promise<T> {
  const deadline = Date.now() + limit_ms
  for (;;) {
    const found = await probe()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`gave up waiting ${limit_ms / 1000} s for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/**
 * The partner's own NATS user, when the bank is the authority of its NATS server (`bank nats
 * init`; `nats_creds` is null on an open server): NATS_CREDS naming a creds file (mode 0600)
 * in a temporary directory, since the operator's NATS user does not reach partners'
 * subjects. `remove` deletes the file.
 */
export function partnerNatsUser(natsCreds: string | null) {
  if (natsCreds === null) return { env: {}, remove: () => {} }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'partner-creds-'))
  const file = path.join(dir, 'partner.creds')
  fs.writeFileSync(file, natsCreds, { mode: 0o600 })
  return { env: { NATS_CREDS: file }, remove: () => fs.rmSync(dir, { recursive: true,
    force: true }) }
}

export interface OnboardedPartner {
  partnerId: string
  rootEntityId: string
  poolAccountId: string
  token: string
  webhookSecret: string
}

/**
 * What first-payment.ts does in its first steps: the operator onboards a partner, approves
 * its root entity (which opens the pool account) and funds the pool account with `deposit` cents
 * (0: none).
 */
export async function onboardPartner(ops: OperatorClient, name: string,
    deposit: number): Promise<OnboardedPartner> {
  const created = await ops.partners.create({
    name: `${name} (Pty) Ltd`,
    email: `finance@${name.toLowerCase().replace(/[^a-z]+/g, '-')}.example`,
    registration_number: registrationNumber(),
    trading_name: name,
  })
  const review = await ops.entities.review({ entity_id: created.root_entity_id,
    decision: 'approve' })
  const poolAccountId = review.account!.account_id
  if (deposit > 0) await ops.accounts.deposit({ account_id: poolAccountId, amount: deposit,
    ref: 'sandbox funding' })
  return {
    partnerId: created.partner_id,
    rootEntityId: created.root_entity_id,
    poolAccountId,
    token: created.credential.token,
    webhookSecret: created.webhook_secret,
  }
}

/** The bank runs in production mode: an example would stop half-way, so none starts. */
export class SandboxRequired extends Error {
  constructor() {
    super(
      'the examples need a bank in sandbox mode, and this one runs in production mode ' +
        '(DATABASE_URL is set and BANK_SANDBOX is not true); nothing was changed. ' +
        'Start the bank with BANK_SANDBOX=true, or without DATABASE_URL (`npm start`).',
    )
    this.name = 'SandboxRequired'
  }
}

/**
 * Asks the bank whether it is a sandbox before an example changes anything: an example funds
 * partners by deposit, reads one-time PINs and moves the clock, which production refuses or
 * holds for a second operator, and would leave a partner onboarded half-way. `ops.sandbox.clock`
 * changes nothing, and production answers it with 403.
 */
export async function requireSandbox(ops: OperatorClient): Promise<void> {
  try {
    await ops.sandbox.clock()
  } catch (error) {
    const production = error instanceof BankApiError && error.code === 403
    throw production && error.message.includes('sandbox mode') ? new SandboxRequired() : error
  }
}
