// The debit-order side of the bank's outside world (DebiCheck-style): the debtor's bank
// authenticates mandates, collects debit orders in batches and later reports the
// collections its customers disputed. The default is the simulated debit rail
// (simulated-debit-rail.ts); a real adapter implements the same calls.

export interface DebitMandateRequest {
  mandate_id: string
  mandate_reference: string
  account_holder_name: string
  account_number: string
  account_type: 'cheque' | 'savings'
  branch_code: string
  max_amount: bigint
  frequency: 'once_off' | 'weekly' | 'monthly' | 'annually'
  /** When the bank first presented the mandate to the debtor's bank (its created_at). */
  presented_at: Date
}

export type DebitMandateOutcome =
  | { status: 'active' }
  | { status: 'rejected'; reason: string }
  /** The debtor has not answered yet: ask again later (at `retry_after` at the earliest). */
  | { status: 'pending'; retry_after: Date }

export interface DebitCollectionRequest {
  debit_order_id: string
  /** The collection's scheduled date (a recurring order has one per occurrence). */
  collection_date: string
  /** 1 on the collection date; one more on each tracking-day retry. */
  attempt: number
  amount: bigint
  account_holder_name: string
  account_number: string
  account_type: 'cheque' | 'savings'
  branch_code: string
  mandate_reference: string
  reference: string
}

export type DebitCollectionOutcome =
  /** Collected. `bank_charges`, when the rail names them, replace the bank's configured fee. */
  | { status: 'collected'; bank_reference: string; bank_charges?: bigint }
  /**
   * The debtor's account could not cover it today: tried again on the next business day while
   * tracking lasts.
   */
  | { status: 'insufficient_funds'; reason: string }
  /** The debtor's account is closed: final. */
  | { status: 'account_closed'; reason: string }
  /** Any other refusal: final. */
  | { status: 'failed'; reason: string }

export interface DebitDispute {
  debit_order_id: string
  collection_date: string
  bank_reference: string
  reason: string
  /** When the debtor disputed the collection at their bank. */
  disputed_at: Date
}

/** The key of one collection: an order and its collection date. */
export function collectionKey(c: { debit_order_id: string; collection_date: string }): string {
  return `${c.debit_order_id}:${c.collection_date}`
}

export interface DebitRail {
  /** Asks the debtor's bank to authenticate a mandate. Idempotent by mandate_id. */
  authenticateMandate(mandate: DebitMandateRequest): Promise<DebitMandateOutcome>
  /**
   * Submits one batch of collections; every one is answered, keyed by collectionKey.
   * Idempotent by order, date and attempt: a batch sent again after a crash gets the same answers.
   */
  submitCollections(collections: DebitCollectionRequest[]): Promise<Map<string,
    DebitCollectionOutcome>>
  /**
   * Disputes of earlier collections that debtors raised by now and the bank has not yet
   * acknowledged, oldest first, a bounded batch. A dispute is handed out again until it
   * is acknowledged, so none is lost when a run dies before booking it.
   */
  collectDisputes(): Promise<DebitDispute[]>
  /** The bank has booked (or refused, past the window) these disputes; unknown keys are ignored. */
  acknowledgeDisputes(keys: readonly string[]): Promise<void>
  /**
   * Sandbox only (the simulated rail): a debtor disputes a collection now, as the operator's
   * `bank debit dispute` asks; the next collection run books it. Absent on a real rail.
   */
  raiseDispute?(dispute: {
    debit_order_id: string; collection_date: string; bank_reference: string }): Promise<void>
}
