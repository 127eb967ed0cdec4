import type { AccountEntryRow, BankTransactionCode } from '../iso20022/camt053-write.ts'
import { camt053Chunks } from '../iso20022/camt053-write.ts'
import { pacs002Chunks, type GroupStatusCode, type TransactionStatusRow }
  from '../iso20022/pacs002-write.ts'
import { pacs004Text, type PaymentReturnRow } from '../iso20022/pacs004-write.ts'
import type { MessageSource, OpenedMessage } from '../iso20022/xml-read.ts'
import { decidePayment } from './decide.ts'
import { incomingPacs008Text } from './incoming-write.ts'
import { clearingHouseId } from './message-ids.ts'
import {
  openOutboundTransfers, type OutboundHeader, type OutboundPayment,
} from './outbound-read.ts'

// The core of the bank's clearing-house simulator, the sandbox's counterpart of the real
// clearing house (docs/operators/rails.md: "The sandbox runs the same adapter against the
// bank's clearing-house simulator, which answers by today's magic recipients and can make
// other banks pay in"). Pure message logic: it reads the bank's pacs.008 with the bank's own
// defensive reader and answers with the messages a clearing house sends (pacs.002, pacs.004,
// an incoming pacs.008, camt.053), as text. It keeps nothing: what settled is handed to the
// caller (SettledEntry), who keeps it until the day's statement. No transport, no database,
// no clock: every time is given, and the same inputs give the same ids and bytes
// (message-ids.ts). Never run in production.

/** Where the simulator stands: the bank's settlement account and its branch code. */
export interface ClearingHouseSettings {
  /** The bank's settlement account at the clearing house (the statement's Acct/Id/Othr/Id). */
  settlement_account_id: string
  /** The bank's branch code, as another bank's payment names it (CdtrAgt). */
  bank_branch_code: string
}

/** What settled on the bank's settlement account: one entry of the day's statement. */
export interface SettledEntry {
  /**
   * A payout of the bank's (debit), its return (credit), another bank's credit (credit), or
   * such a credit the bank sent back (`bank_return`, debit).
   */
  kind: 'payout' | 'return' | 'incoming' | 'bank_return'
  /** The message that settled it: the bank's pacs.008, the pacs.004, the incoming pacs.008. */
  message_id: string
  /** The payment's end-to-end id (for a return: the returned payment's). */
  end_to_end_id: string
  tx_id: string | null
  amount: bigint
  /** The day it settled, `YYYY-MM-DD` (South African time). */
  settled_on: string
}

/** A message made, as text, with its id. */
export interface MadeMessage {
  message_id: string
  text: string
}

/** The answer to one of the bank's pacs.008. */
export interface TransfersAnswer {
  /** The message answered, with its decisions counted. */
  original: OutboundHeader
  status_report_id: string
  /** ACSC (all accepted), RJCT (all rejected) or PART. */
  group_status: GroupStatusCode
  /** The pacs.002, one status per payment in the message's order, in chunks. */
  statusReport(): AsyncGenerator<string, void, undefined>
  /** The payments accepted (settled on the answer's day), in the message's order. */
  settled(): AsyncGenerator<SettledEntry, void, undefined>
  /** How many accepted payments the recipient's bank sends back later. */
  returned_count: number
  /**
   * The pacs.004 of those returns, made at `at` (the caller's "later": a clearing run), and
   * their entries; null when the message has none.
   */
  paymentReturn(at: Date): Promise<{ message: MadeMessage; settled: SettledEntry[] } | null>
}

/** Another bank paying into an account of the bank (`bank sandbox incoming`). */
export interface IncomingRequest {
  account_number: string
  cents: bigint
  payer?: { name: string; account_number?: string; branch_code?: string }
  reference?: string
  payment_type?: 'EFT' | 'RTC'
  /**
   * The caller's number of this incoming payment (e.g. a counter it keeps): two payments
   * alike in everything else get other ids by it, and the same one made again the same ids.
   */
  sequence: number
}

/** The payer when the request names none: a customer of another bank (Capitec's branch). */
export const sandbox_payer = {
  name: 'Sandbox Payer',
  account_number: '1000000001',
  branch_code: '470010',
} as const

const payout_code: BankTransactionCode = { domain: 'PMNT', family: 'ICDT', sub_family: 'DMCT' }
const return_code: BankTransactionCode = { domain: 'PMNT', family: 'ICDT', sub_family: 'RRTN' }
const incoming_code: BankTransactionCode = { domain: 'PMNT', family: 'RCDT', sub_family: 'DMCT' }

/** South Africa's time, UTC+2 all year (no daylight saving): the clearing day. */
const sast_offset_ms = 2 * 60 * 60 * 1000

/** The clearing day of an instant: its date in South Africa. */
export function clearingDay(at: Date): string {
  return new Date(at.getTime() + sast_offset_ms).toISOString().slice(0, 10)
}

export class ClearingHouse {
  constructor(private readonly settings: ClearingHouseSettings) {}

  /**
   * Reads one of the bank's pacs.008 (checked whole: a refused one rejects with
   * MessageRefused and is answered with nothing) and decides every payment by its recipient
   * (decide.ts). The answer's messages are made when asked for, from a new reading of the
   * source, which must give the same bytes.
   */
  async answerTransfers(source: MessageSource, at: Date): Promise<TransfersAnswer> {
    const opened = await openOutboundTransfers(source)
    const original = opened.header
    const statusReportId = clearingHouseId('status_report', original.message_id)
    const { accepted, rejected, returned } = original.tally
    const groupStatus: GroupStatusCode = rejected === 0 ? 'ACSC' : accepted === 0 ? 'RJCT' : 'PART'
    const day = clearingDay(at)
    return {
      original,
      status_report_id: statusReportId,
      group_status: groupStatus,
      statusReport: () => pacs002Chunks({
        message_id: statusReportId,
        created_at: at,
        original_message_id: original.message_id,
        original_number_of_transactions: original.transaction_count,
        original_control_sum: original.control_sum,
        group_status: groupStatus,
      }, statusesOf(opened)),
      settled: () => settledOf(opened, day),
      returned_count: returned,
      paymentReturn: (returnedAt) => returned === 0 ? Promise.resolve(null)
        : this.paymentReturn(opened, returnedAt),
    }
  }

  /** Another bank's credit to an account of the bank: its pacs.008 and its entry. */
  async incoming(request: IncomingRequest, at: Date):
    Promise<{ message: MadeMessage; end_to_end_id: string; settled: SettledEntry }> {
    if (!Number.isSafeInteger(request.sequence) || request.sequence < 0) {
      throw new RangeError(`sequence must be a whole number from 0, not ${request.sequence}`)
    }
    const payer = {
      name: request.payer?.name ?? sandbox_payer.name,
      account_number: request.payer?.account_number ?? sandbox_payer.account_number,
      branch_code: request.payer?.branch_code ?? sandbox_payer.branch_code,
    }
    const paymentType = request.payment_type ?? 'EFT'
    const inputs = [request.account_number, String(request.cents), payer.name,
      payer.account_number, payer.branch_code, request.reference ?? '', paymentType,
      String(request.sequence), at.toISOString()]
    const messageId = clearingHouseId('incoming', ...inputs)
    const endToEndId = clearingHouseId('incoming_end_to_end', ...inputs)
    const day = clearingDay(at)
    const text = await incomingPacs008Text({
      message_id: messageId, created_at: at, end_to_end_id: endToEndId, amount: request.cents,
      settlement_date: day, payment_type: paymentType, payer,
      payee: { account_number: request.account_number,
        branch_code: this.settings.bank_branch_code },
      ...(request.reference === undefined ? {} : { reference: request.reference }),
    })
    return {
      message: { message_id: messageId, text },
      end_to_end_id: endToEndId,
      settled: { kind: 'incoming', message_id: messageId, end_to_end_id: endToEndId,
        tx_id: endToEndId, amount: request.cents, settled_on: day },
    }
  }

  /**
   * The day's statement (camt.053) of the settlement account: `opening_balance` (cents, may
   * be negative) and one booked entry per settled payment, return and incoming credit of the
   * day, in the order given. Every entry must be of `day`.
   */
  statement(
    day: string,
    opening_balance: bigint,
    entries: readonly SettledEntry[],
    at: Date,
  ): { message_id: string; closing_balance: bigint; chunks(): AsyncGenerator<string> } {
    let closing = opening_balance
    for (const entry of entries) {
      if (entry.settled_on !== day) {
        throw new Error(`the statement of ${day} was given an entry of ${entry.settled_on}`)
      }
      closing += debits(entry) ? -entry.amount : entry.amount
    }
    const account = this.settings.settlement_account_id
    const messageId = clearingHouseId('statement', account, day)
    const header = {
      message_id: messageId, created_at: at, statement_id: messageId, account_id: account,
      opening_balance: { amount: opening_balance, date: day },
      closing_balance: { amount: closing, date: day },
    }
    return {
      message_id: messageId,
      closing_balance: closing,
      chunks: () => camt053Chunks(header, entries.map((entry, index) => entryRow(entry, index))),
    }
  }

  private async paymentReturn(
    opened: OpenedMessage<OutboundHeader, OutboundPayment>,
    at: Date,
  ): Promise<{ message: MadeMessage; settled: SettledEntry[] }> {
    const original = opened.header.message_id
    const messageId = clearingHouseId('payment_return', original)
    const rows: PaymentReturnRow[] = []
    for await (const chunk of opened.items()) {
      for (const payment of chunk) {
        const decision = decidePayment(recipientOf(payment))
        if (decision.status !== 'ACSC' || decision.returned === undefined) continue
        rows.push({
          return_id: clearingHouseId('return_id', original, payment.end_to_end_id),
          original_message_id: original,
          original_end_to_end_id: payment.end_to_end_id,
          ...(payment.tx_id === null ? {} : { original_tx_id: payment.tx_id }),
          returned_amount: payment.amount,
          reason_code: decision.returned.reason_code,
          additional_information: decision.returned.additional_information,
        })
      }
    }
    const text = await pacs004Text({ message_id: messageId, created_at: at }, rows)
    const day = clearingDay(at)
    return {
      message: { message_id: messageId, text },
      settled: rows.map((row) => ({ kind: 'return', message_id: messageId,
        end_to_end_id: row.original_end_to_end_id, tx_id: row.original_tx_id ?? null,
        amount: row.returned_amount, settled_on: day })),
    }
  }
}

function recipientOf(payment: OutboundPayment): { account_number: string; branch_code: string } {
  return { account_number: payment.creditor_account_number,
    branch_code: payment.creditor_branch_code }
}

async function* statusesOf(opened: OpenedMessage<OutboundHeader, OutboundPayment>):
  AsyncGenerator<TransactionStatusRow> {
  for await (const chunk of opened.items()) {
    for (const payment of chunk) {
      const decision = decidePayment(recipientOf(payment))
      yield {
        original_end_to_end_id: payment.end_to_end_id,
        ...(payment.tx_id === null ? {} : { original_tx_id: payment.tx_id }),
        status: decision.status,
        ...(decision.status === 'RJCT' ? { reason_code: decision.reason_code,
          additional_information: decision.additional_information } : {}),
      }
    }
  }
}

async function* settledOf(opened: OpenedMessage<OutboundHeader, OutboundPayment>, day: string):
  AsyncGenerator<SettledEntry> {
  for await (const chunk of opened.items()) {
    for (const payment of chunk) {
      if (decidePayment(recipientOf(payment)).status !== 'ACSC') continue
      yield { kind: 'payout', message_id: opened.header.message_id,
        end_to_end_id: payment.end_to_end_id, tx_id: payment.tx_id, amount: payment.amount,
        settled_on: day }
    }
  }
}

/** Whether an entry debits the settlement account: the bank's payouts and its returns. */
function debits(entry: SettledEntry): boolean {
  return entry.kind === 'payout' || entry.kind === 'bank_return'
}

/** A settled entry as a statement's entry. */
function entryRow(entry: SettledEntry, index: number): AccountEntryRow {
  const code = entry.kind === 'payout' ? payout_code
    : entry.kind === 'incoming' ? incoming_code : return_code
  return {
    entry_reference: String(index + 1),
    amount: entry.amount,
    credit_debit: debits(entry) ? 'DBIT' : 'CRDT',
    booking_date: entry.settled_on,
    value_date: entry.settled_on,
    account_servicer_reference: clearingHouseId('entry', entry.kind, entry.message_id,
      entry.end_to_end_id),
    bank_transaction_code: code,
    references: {
      message_id: entry.message_id,
      end_to_end_id: entry.end_to_end_id,
      ...(entry.tx_id === null ? {} : { tx_id: entry.tx_id }),
    },
  }
}
