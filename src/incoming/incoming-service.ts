import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { assert, Forbidden, Invalid, NotFound } from '../errors.ts'
import { IsoValueError } from '../rails/iso20022/iso-value-error.ts'
import { appendEvents, type NewEvent } from '../events/index.ts'
import {
  incomingCredits, type CreditedEntry, type IncomingCreditEntry,
} from '../ledger/incoming-journals.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import { newRowId } from '../ledger/row-id.ts'
import { sandbox_payer } from '../rails/clearing-house/clearing-house.ts'
import type { ClearingHouseSimulator } from '../rails/clearing-house/simulator.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { IncomingOutcome, IsoRail } from '../rails/iso-rail.ts'
import type { IncomingCredit } from '../rails/iso20022/pacs008-read.ts'
import { reason_codes } from '../rails/iso20022/reason-codes.ts'
import type { Database } from '../schema.ts'
import type { IncomingScreening, ScreenedPayers } from './incoming-screening.ts'
import type { IncomingDetails, SandboxIncomingReply, SandboxIncomingRequest }
  from './incoming-types.ts'

// Payments other banks send to the bank's accounts (in the words of docs/guides/payments.md:
// another bank's pacs.008 naming one of the bank's accounts credits it). The ISO rail reads each
// incoming message whole and hands its credits here, in the transaction that records the message:
// each end-to-end id (of its paying bank) is booked once, as an `incoming` transaction with the
// payer's name and reference, and announced to the account's partner (`payment.received`);
// a credit to an account number the bank does not have is sent back (AC01) by the rail's
// pacs.004. The payer's full details are kept here (`incoming_details`).

type Db = Kysely<Database>

/** End-to-end ids looked up at once (a message may carry a whole file of credits). */
const seen_page = 1000

export class IncomingPayments {
  constructor(
    private readonly db: Db,
    private readonly ledger: ComposedWriter,
    private readonly accounts: {
      idsByNumbers(accountNumbers: readonly string[], executor: Db): Promise<Map<string, string>>
    },
    private readonly iso: IsoRail,
    private readonly simulator: ClearingHouseSimulator | undefined,
    private readonly clock: Clock,
    /** The bank's own branch code: the CdtrAgt of the credits that are the bank's. */
    private readonly branchCode: string,
    private readonly screening: IncomingScreening,
  ) {
    iso.handleIncoming<ScreenedPayers>(
      (trx, messageId, credits, screened) => this.book(trx, messageId, credits, screened),
      (credits) => screening.check(credits))
  }

  /**
   * Books a message's credits not seen before; names those to send back. A credit whose
   * payer hit the sanctions lists (`screened`, before the transaction) is held in review.
   */
  async book(trx: Db, messageId: string, credits: IncomingCredit[],
      screened: ScreenedPayers = new Map()): Promise<IncomingOutcome> {
    const { toBook, returns } = await this.route(trx, await this.unseen(trx, credits))
    const entries: IncomingCreditEntry[] = toBook.map(({ credit, accountId, txId }) => ({
      txId, accountId, amount: credit.amount, paymentType: credit.payment_type,
      payerName: credit.debtor_name, reference: credit.remittance ?? '',
    }))
    const booked: CreditedEntry[] = []
    for (let start = 0; start < entries.length; start += seen_page) {
      booked.push(...await this.ledger.write(trx, incomingCredits,
        entries.slice(start, start + seen_page)))
    }
    assert(booked.length === toBook.length, 'every incoming credit is booked once')
    // An account that takes no credits (blocked, closed), found under its lock: sent back.
    const credited = toBook.flatMap((entry, i) => {
      const outcome = booked[i]!
      if (outcome.returned === undefined) return [{ ...entry, partner_id: outcome.partner_id }]
      const code = outcome.returned
      returns.push({ credit: entry.credit, reason_code: code, text: reason_codes[code].text })
      return []
    })
    await this.screening.hold(trx, screened, credited)
    const now = this.clock.now()
    const rows = [
      ...credited.map(({ credit, accountId, txId, partner_id }) => ({
        ...recordOf(credit, messageId, now), id: txId, tx_id: txId, account_id: accountId,
        partner_id, status: 'credited' as const,
      })),
      ...returns.map(({ credit, reason_code }) => ({
        ...recordOf(credit, messageId, now), id: randomUUID(), tx_id: null, account_id: null,
        partner_id: null, status: 'returned' as const, return_reason_code: reason_code,
      })),
    ]
    for (let start = 0; start < rows.length; start += seen_page) {
      await trx.insertInto('incoming_payments').values(rows.slice(start, start + seen_page))
        .execute()
    }
    await appendEvents(trx, credited.map(({ credit, accountId, txId, partner_id }): NewEvent => ({
      type: 'payment.received', partner_id, resource_id: txId,
      occurred_at: now, data: {
        tx_id: txId, account_id: accountId, amount: String(credit.amount),
        payment_type: credit.payment_type, payer_name: credit.debtor_name,
        reference: credit.remittance, received_at: formatTimestamp(now),
      },
    })))
    return { credited: credited.length, returns }
  }

  /**
   * The credits to book (to an account of the bank) and those to send back: addressed to
   * another bank (RC01) or to no account of the bank (AC01).
   */
  private async route(trx: Db, fresh: IncomingCredit[]): Promise<{
      toBook: Array<{ credit: IncomingCredit; accountId: string; txId: string }>
      returns: IncomingOutcome['returns'] }> {
    const toBook: Array<{ credit: IncomingCredit; accountId: string; txId: string }> = []
    const returns: IncomingOutcome['returns'] = []
    // In the message's transaction (PGlite has one connection: a read beside it would wait).
    const ids = await this.accounts.idsByNumbers(fresh.map((c) => c.creditor_account_number),
      trx)
    for (const credit of fresh) {
      // A credit addressed to another bank (its CdtrAgt) is not the bank's to book.
      if (credit.creditor_branch_code !== this.branchCode) {
        returns.push({ credit, reason_code: 'RC01', text: reason_codes.RC01.text })
        continue
      }
      const accountId = ids.get(credit.creditor_account_number)
      if (accountId) toBook.push({ credit, accountId, txId: newRowId() })
      else returns.push({ credit, reason_code: 'AC01', text: reason_codes.AC01.text })
    }
    return { toBook, returns }
  }

  /** The credits whose end-to-end id (of their paying bank) was not seen before, once each. */
  private async unseen(trx: Db, credits: IncomingCredit[]): Promise<IncomingCredit[]> {
    if (credits.length === 0) return []
    const ids = [...new Set(credits.map((c) => c.end_to_end_id))]
    const keys = new Set<string>()
    for (let start = 0; start < ids.length; start += seen_page) {
      const seen = await trx.selectFrom('incoming_payments')
        .select(['payer_branch_code', 'end_to_end_id'])
        .where('end_to_end_id', 'in', ids.slice(start, start + seen_page))
        .execute()
      for (const row of seen) keys.add(`${row.payer_branch_code} ${row.end_to_end_id}`)
    }
    return credits.filter((credit) => {
      const key = `${credit.debtor_branch_code} ${credit.end_to_end_id}`
      if (keys.has(key)) return false
      keys.add(key)
      return true
    })
  }

  /** An incoming payment's payer and ids; another partner's (or none) is not found. */
  async details(partnerId: string, txId: string): Promise<IncomingDetails> {
    const row = await this.db.selectFrom('incoming_payments').selectAll()
      .where('partner_id', '=', partnerId).where('tx_id', '=', txId).executeTakeFirst()
    if (!row || row.tx_id === null || row.account_id === null) {
      throw new NotFound('incoming payment')
    }
    return {
      tx_id: row.tx_id, account_id: row.account_id, amount: String(row.amount),
      payment_type: row.payment_type,
      payer: { name: row.payer_name, account_number: row.payer_account_number,
        branch_code: row.payer_branch_code },
      reference: row.reference, end_to_end_id: row.end_to_end_id, message_id: row.message_id,
      settlement_date: row.settlement_date, received_at: formatTimestamp(new Date(row.received_at)),
    }
  }

  /** What the sandbox's clearing house is asked to send (the payer's details as given). */
  private paymentOf(r: SandboxIncomingRequest) {
    return {
      account_number: r.account_number, cents: BigInt(r.amount),
      payer: {
        name: r.payer_name ?? sandbox_payer.name,
        account_number: r.payer_account_number ?? sandbox_payer.account_number,
        branch_code: r.payer_branch_code ?? sandbox_payer.branch_code,
      },
      ...(r.reference === undefined ? {} : { reference: r.reference }),
      ...(r.payment_type === undefined ? {} : { payment_type: r.payment_type }),
    }
  }

  /**
   * Sandbox: another bank pays in through the clearing-house simulator, and the bank applies
   * its message before answering.
   */
  async sandboxIncoming(r: SandboxIncomingRequest): Promise<SandboxIncomingReply> {
    if (!this.simulator) {
      throw new Forbidden('the clearing-house simulator is off (BANK_RAIL_SIMULATOR)')
    }
    const sent = await this.simulator.incoming(this.paymentOf(r)).catch((error: unknown) => {
      // A text the message cannot hold (a noncharacter): the request's, not the bank's fault.
      if (error instanceof IsoValueError) throw Invalid.field(fieldOf(error.field), error.rule)
      throw error
    })
    await this.iso.applyInbound()
    const row = await this.db.selectFrom('incoming_payments')
      .select(['status', 'tx_id', 'return_reason_code'])
      .where('message_id', '=', sent.message_id).where('end_to_end_id', '=', sent.end_to_end_id)
      .executeTakeFirst()
    assert(row, `incoming payment ${sent.end_to_end_id} was not applied`)
    return { status: row.status, tx_id: row.tx_id, reason_code: row.return_reason_code,
      message_id: sent.message_id, end_to_end_id: sent.end_to_end_id }
  }
}

/** The request field an ISO value error is about (the message's path names the element). */
function fieldOf(isoField: string): string {
  if (isoField.startsWith('Dbtr/Nm')) return 'payer_name'
  if (isoField.includes('Ustrd')) return 'reference'
  if (isoField.startsWith('DbtrAcct')) return 'payer_account_number'
  if (isoField.startsWith('DbtrAgt')) return 'payer_branch_code'
  return 'account_number'
}

function recordOf(credit: IncomingCredit, messageId: string, now: Date) {
  return {
    message_id: messageId, end_to_end_id: credit.end_to_end_id, amount: credit.amount,
    payment_type: credit.payment_type, payer_name: credit.debtor_name,
    payer_account_number: credit.debtor_account_number,
    payer_branch_code: credit.debtor_branch_code,
    account_number: credit.creditor_account_number, reference: credit.remittance,
    settlement_date: credit.settlement_date, received_at: now, return_reason_code: null,
  }
}
