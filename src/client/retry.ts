import { bulkOperations } from '../bulk/bulk-contract.ts'
import { debitOperations } from '../debit/debit-contract.ts'
import type { Operation } from '../contract/operation.ts'
import { transferOperations } from '../transfers/transfer-contract.ts'

// The SDK's opt-in retry (`new BankClient({ ..., retry: { attempts } })`,
// docs/guides/retries-and-idempotency.md). A request that timed out or was answered 503 may be
// sent again when that cannot do the work twice: a read, or a write that carries its
// idempotency key (the same key goes out again: the request is not rebuilt). A `duplicate`
// answering such a retry, after an attempt that may have reached the bank, means the bank took
// the first one: the SDK answers with the original (read back with the operation's read), so
// that a retry after a timeout is simply the answer. Nothing else is retried: a write without a
// key, and any other 4xx, are thrown as they come.

/** The `retry` option of `new BankClient`. */
export interface RetryOptions {
  /**
   * How many times in all a request may be sent: 1 sends it once (no retry), 3 retries it
   * twice. A whole number from 1 to `retry_limits.attempts_max`.
   */
  attempts: number
  /**
   * The wait before the first retry in milliseconds (default `retry_limits.backoff_ms_default`),
   * doubled before each next one (at most `retry_limits.backoff_ms_max`), each less a random
   * part of up to half, so that many clients retrying do not retry together.
   */
  backoffMs?: number
}

export const retry_limits = {
  attempts_max: 10,
  backoff_ms_default: 200,
  backoff_ms_max: 5_000,
} as const

/** What the SDK may call to read the original back: the api's own `call`. */
export type Caller = (op: Operation, body: Record<string, unknown>) => Promise<unknown>

/** How an operation's request is retried. */
export type RetryPolicy =
  /** A read: sending it again changes nothing. */
  | { kind: 'read' }
  /**
   * A write carrying an idempotency key (`key`, a request field): sent again with the same key.
   * `recover`, when there is one, reads the original back from the `duplicate` that answered a
   * retry, in the shape the write answers with; without it that `duplicate` is thrown (its
   * details carry the original's id, `originalIdField`).
   */
  | { kind: 'keyed'; key: string; originalIdField: string;
    recover?: (call: Caller, request: Record<string, unknown>, originalId: string) =>
      Promise<unknown> }
  /** A write without a key: never retried, since a repeat might do the work twice. */
  | { kind: 'none' }

/** A transfer's reply rebuilt from its transaction: what the bank answered the first time. */
async function originalTransfer(call: Caller, request: Record<string, unknown>,
    txId: string): Promise<unknown> {
  const { transaction } = await call(transferOperations.getTransaction, { tx_id: txId }) as {
    transaction: { tx_id: string; status: string } }
  // The duplicate guarantees the amount is the request's; the status is the payment's now.
  return { tx_id: transaction.tx_id, amount: String(request.amount), status: transaction.status }
}

/** A debit order's create reply rebuilt from its status. */
async function originalDebitOrder(call: Caller, request: Record<string, unknown>,
    debitOrderId: string): Promise<unknown> {
  const view = await call(debitOperations.status, { entity_id: request.entity_id,
    debit_order_id: debitOrderId }) as { debit_order_id: string; status: string;
    collection_date: string; amount: number }
  return { debit_order_id: view.debit_order_id, status: view.status,
    collection_date: view.collection_date, amount: String(view.amount),
    reference: request.reference }
}

/**
 * The writes that carry an idempotency key. A bulk batch's initiate reply (its one-time PIN's
 * reference and expiry) cannot be read back, so its `duplicate` after a retry is thrown: the
 * batch was initiated, `bulkPayments.status` shows it.
 */
const keyed = new Map<Operation, Extract<RetryPolicy, { kind: 'keyed' }>>([
  [transferOperations.transfer,
    { kind: 'keyed', key: 'clientTxId', originalIdField: 'tx_id', recover: originalTransfer }],
  [transferOperations.transferInternal,
    { kind: 'keyed', key: 'clientTxId', originalIdField: 'tx_id', recover: originalTransfer }],
  [debitOperations.create, { kind: 'keyed', key: 'clientTxId',
    originalIdField: 'debit_order_id', recover: originalDebitOrder }],
  [bulkOperations.initiate,
    { kind: 'keyed', key: 'bulk_payment_id', originalIdField: 'bulk_payment_id' }],
])

/** How the SDK retries an operation's request (when the client was given `retry`). */
export function retryPolicyOf(op: Operation): RetryPolicy {
  const policy = keyed.get(op)
  if (policy) return policy
  return op.permission === 'read' || op.permission === 'card_details' ? { kind: 'read' }
    : { kind: 'none' }
}

/** Checks the `retry` option when the client is made: names what is wrong with it. */
export function checkRetryOptions(retry: unknown, client: string): void {
  if (retry === undefined) return
  const fail = (what: string) => {
    throw new TypeError(`${client}({ retry }): ${what}`)
  }
  if (typeof retry !== 'object' || retry === null) fail('retry must be an object: { attempts }')
  const { attempts, backoffMs } = retry as Partial<RetryOptions>
  if (!Number.isInteger(attempts) || attempts! < 1 || attempts! > retry_limits.attempts_max) {
    fail(`retry.attempts is ${JSON.stringify(attempts) ?? 'missing'}; it must be a whole ` +
      `number from 1 to ${retry_limits.attempts_max} (how many times in all a request is sent)`)
  }
  if (backoffMs !== undefined && (!Number.isInteger(backoffMs) || backoffMs < 0
      || backoffMs > retry_limits.backoff_ms_max)) {
    fail(`retry.backoffMs is ${JSON.stringify(backoffMs)}; it must be a whole number of ` +
      `milliseconds from 0 to ${retry_limits.backoff_ms_max}`)
  }
}

/** The wait before retry number `retry` (1 for the first). */
export function backoffOf(options: RetryOptions, retry: number): number {
  const base = options.backoffMs ?? retry_limits.backoff_ms_default
  const full = Math.min(base * 2 ** (retry - 1), retry_limits.backoff_ms_max)
  return Math.round(full * (1 - Math.random() / 2))
}

/** How an attempt failed, as the retry loop needs to know it. */
export interface Failure {
  /** A timeout, or a 503 (the bank's, or no bank instance answering): worth another try. */
  retryable: boolean
  /**
   * The request may have reached the bank (a timeout, the bank's own 503); false when NATS
   * said no bank instance was subscribed, so nobody got it.
   */
  mayHaveLanded: boolean
  /** The original's id, when the bank answered `duplicate`. */
  duplicateOf?: string | undefined
}

/**
 * Sends by `send` until it answers, a failure is not worth retrying, or `options.attempts` are
 * spent. A `duplicate` after an attempt that may have reached the bank is answered by `recover`
 * (the original); a `duplicate` on the first attempt is the caller's own repeat, and thrown.
 * `settle` sees what is thrown (the attempts made).
 */
export async function withRetries<T>(
  options: RetryOptions,
  policy: RetryPolicy,
  send: () => Promise<T>,
  classify: (error: unknown) => Failure,
  recover: (originalId: string) => Promise<T> | undefined,
  settle: (error: unknown, attempts: number) => unknown,
): Promise<T> {
  let landed = false
  for (let attempt = 1; ; attempt++) {
    try {
      return await send()
    } catch (error) {
      const failure = classify(error)
      if (failure.duplicateOf !== undefined && landed) {
        const original = recover(failure.duplicateOf)
        if (original) return original
      }
      if (!failure.retryable || policy.kind === 'none' || attempt >= options.attempts) {
        throw settle(error, attempt)
      }
      landed ||= failure.mayHaveLanded
      await new Promise((resolve) => setTimeout(resolve, backoffOf(options, attempt)))
    }
  }
}
