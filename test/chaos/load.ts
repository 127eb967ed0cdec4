import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { BankApiError, BankClient, OperatorClient } from '../../src/client/index.ts'
import { businessEntity } from '../support/fixtures.ts'
import type { TransferBody } from '../transfers/helpers.ts'

// The load a chaos test runs while it breaks something: transfers from a fixed number of
// concurrent senders, every reply recorded, and at the end the check that every
// acknowledged transfer exists exactly once.

export const loadLimits = {
  concurrency: 64,
  accounts: 8,
  account_funding_cents: 20_000_000,
  request_timeout_ms: 5_000,
  /** A sender whose request failed waits this long, doubling up to the max, before its next one. */
  backoff_first_ms: 100,
  backoff_max_ms: 1_000,
}

export interface ChaosBank {
  nc: NatsConnection
  operator: OperatorClient
  client: BankClient
  partnerId: string
  rootEntityId: string
  accounts: string[]
  /** The partner's webhook signing secret, as the partner-create reply gave it. */
  webhookSecret: string
}

/** Connects as the bootstrap operator and onboards one partner with funded accounts. */
export async function setUpBank(natsUrl: string, dataDir: string): Promise<ChaosBank> {
  // The test's own connection rides out a NATS restart like the service's does.
  const nc = await connect({ servers: natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 250 })
  const token = fs.readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim()
  // The operator's set-up and checks keep the SDK's default timeout; only the load's
  // requests time out early, so that a request lost in the fault is retried soon.
  const operator = new OperatorClient({ connection: nc, token })
  const root = businessEntity()
  const created = await operator.partners.create({
    name: root.name,
    email: root.email,
    registration_number: root.registration_number,
    trading_name: root.trading_name,
  })
  await operator.entities.review({ entity_id: created.root_entity_id, decision: 'approve' })
  const client = new BankClient({
    connection: nc,
    token: created.credential.token,
    partnerId: created.partner_id,
    timeoutMs: loadLimits.request_timeout_ms,
  })
  const { accounts: existing } = await client.accounts.getByEntity(
    { entity_id: created.root_entity_id })
  const accounts = existing.map((a) => a.account_id)
  while (accounts.length < loadLimits.accounts) {
    accounts.push((await client.accounts.create({ entity_id: created.root_entity_id })).account_id)
  }
  for (const account_id of accounts) {
    await operator.accounts.deposit({ account_id, amount: loadLimits.account_funding_cents,
      ref: 'chaos funding' })
  }
  return { nc, operator, client, partnerId: created.partner_id,
    rootEntityId: created.root_entity_id, accounts, webhookSecret: created.webhook_secret }
}

/** One transfer the test asked for, with the tx_id of its acknowledgement once it has one. */
interface Transfer {
  body: TransferBody
  txId: string | undefined
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export class TransferLoad {
  readonly transfers: Transfer[] = []
  requests = 0
  /** Replies by code: 200, 409 (a duplicate carrying the original tx_id), 503, 504, … */
  readonly codes = new Map<string, number>()
  /** The first few unexpected replies, for failure messages. */
  readonly surprises: string[] = []
  private readonly waiters: Array<{
    acknowledged: number; failures: number; resolve: () => void }> = []
  private running = false
  private failures = 0
  private acknowledgedCount = 0

  constructor(
    private readonly bank: ChaosBank,
    /** The budget: no new attempt once this many were sent or this time (epoch ms) has passed. */
    public maxRequests: number,
    public deadline: number,
  ) {}

  get acknowledged(): number {
    return this.acknowledgedCount
  }

  get budgetLeft(): boolean {
    return this.requests < this.maxRequests && Date.now() < this.deadline
  }

  /**
   * A new transfer: EFT and RTC alternate; the ref is unique so the database can be searched by it.
   */
  private next(): Transfer {
    const n = this.transfers.length
    const body: TransferBody = {
      account_id: this.bank.accounts[n % this.bank.accounts.length]!,
      clientTxId: randomUUID(),
      amount: 100 + (n % 900),
      ref: `chaos ${n}`,
      own_ref: `chaos transfer ${n}`,
      account_number: '62000000001',
      branch_code: '250655',
      name: 'Chaos Recipient',
      ...(n % 2 === 0 ? { pay_and_clear: true } : {}),
    }
    const transfer = { body, txId: undefined }
    this.transfers.push(transfer)
    return transfer
  }

  /**
   * Sends one attempt of a transfer; true when it is acknowledged (now or by a 409 naming its
   * tx_id).
   */
  async send(transfer: Transfer): Promise<boolean> {
    assert.equal(transfer.txId, undefined, 'only an unacknowledged transfer is sent again')
    this.requests++
    let code: string
    try {
      transfer.txId = (await this.bank.client.accounts.transfer(transfer.body)).tx_id
      code = '200'
    } catch (error) {
      code = this.refusal(transfer, error)
    }
    this.codes.set(code, (this.codes.get(code) ?? 0) + 1)
    if (transfer.txId === undefined) this.failures++
    else this.acknowledgedCount++
    this.wake()
    return transfer.txId !== undefined
  }

  /** Records a refusal; a 409 duplicate acknowledges the transfer with the original tx_id. */
  private refusal(transfer: Transfer, error: unknown): string {
    if (!(error instanceof BankApiError)) {
      this.surprise(`${(error as Error)?.name}: ${(error as Error)?.message}`)
      return (error as Error)?.name ?? 'error'
    }
    if (error.code === 409) {
      const original = (error.details as Array<{ tx_id?: unknown }>).find(
        (d) => typeof d.tx_id === 'string')?.tx_id
      if (typeof original === 'string') transfer.txId = original
      else this.surprise(`409 without the original tx_id: ${JSON.stringify(error.details)}`)
    } else if (error.code !== 503 && error.code !== 504) {
      this.surprise(`${error.code} ${error.type}: ${error.message}`)
    }
    return String(error.code)
  }

  private surprise(text: string): void {
    if (this.surprises.length < 10) this.surprises.push(text)
  }

  /**
   * Runs `concurrency` senders of new transfers until `stop()` says so or the budget is spent.
   * A sender backs off after a failure, as a well-behaved client does during an outage.
   */
  async run(stop: () => boolean): Promise<void> {
    this.running = true
    const sender = async () => {
      let backoff = loadLimits.backoff_first_ms
      while (!stop() && this.budgetLeft) {
        if (await this.send(this.next())) backoff = loadLimits.backoff_first_ms
        else {
          await pause(backoff)
          backoff = Math.min(backoff * 2, loadLimits.backoff_max_ms)
        }
      }
    }
    await Promise.all(Array.from({ length: loadLimits.concurrency }, sender))
    this.running = false
    this.wake()
  }

  /**
   * Sends every unacknowledged transfer again, with its own clientTxId, until each is acknowledged.
   */
  async retryUnacknowledged(): Promise<void> {
    const queue = this.transfers.filter((t) => t.txId === undefined)
    const sender = async () => {
      let backoff = loadLimits.backoff_first_ms
      for (let t = queue.shift(); t && this.budgetLeft; t = queue.shift()) {
        while (!(await this.send(t)) && this.budgetLeft) {
          await pause(backoff)
          backoff = Math.min(backoff * 2, loadLimits.backoff_max_ms)
        }
      }
    }
    await Promise.all(Array.from({ length: loadLimits.concurrency }, sender))
  }

  /** `concurrency` new transfers at once; how many were acknowledged. */
  async burst(): Promise<number> {
    const sent = await Promise.all(Array.from({ length: loadLimits.concurrency },
      () => this.send(this.next())))
    return sent.filter(Boolean).length
  }

  /** Resolves once `more` further transfers are acknowledged, or the load stops first. */
  untilAcknowledged(more: number): Promise<void> {
    return this.until({ acknowledged: this.acknowledged + more, failures: Infinity })
  }

  /** Resolves once `more` further attempts have failed, or the load stops first. */
  untilFailures(more: number): Promise<void> {
    return this.until({ acknowledged: Infinity, failures: this.failures + more })
  }

  private until(target: { acknowledged: number; failures: number }): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ ...target, resolve })
      this.wake()
    })
  }

  private wake(): void {
    const acknowledged = this.acknowledged
    for (const w of [...this.waiters]) {
      if (!this.running || acknowledged >= w.acknowledged || this.failures >= w.failures) {
        this.waiters.splice(this.waiters.indexOf(w), 1)
        w.resolve()
      }
    }
  }
}
