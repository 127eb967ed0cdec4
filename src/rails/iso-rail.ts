import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import path from 'node:path'
import type { Insertable, Kysely, Selectable } from 'kysely'
import type { Clock } from '../clock.ts'
import { assert } from '../errors.ts'
import type { Database } from '../schema.ts'
import { endToEndIdOf } from './iso20022/end-to-end-id.ts'
import { checkRow, pacs008Chunks, pacs008_message_name, type CreditTransferRow,
  type IsoParty } from './iso20022/pacs008-write.ts'
import {
  pacs002_message, readStatusReport, type StatusReportHeader, type TransactionStatus,
}
  from './iso20022/pacs002-read.ts'
import { pacs004_message, readPaymentReturn } from './iso20022/pacs004-read.ts'
import { pacs004Text } from './iso20022/pacs004-write.ts'
import { readCreditTransfers, type IncomingCredit } from './iso20022/pacs008-read.ts'
import { pacs008RtcText } from './iso20022/pacs008-write.ts'
import { pacs028Text } from './iso20022/pacs028-write.ts'
import { toSast } from '../calendar/sa-calendar.ts'
import type { RtcGateway } from './rtc-gateway.ts'
import { not_received, reasonCode, rejectionOutcome } from './iso20022/reason-codes.ts'
import { MessageRefused, type OpenedMessage } from './iso20022/xml-read.ts'
import {
  camt053_message, camt054_message, openNotification, openStatement, type AccountEntry,
  type AccountReportHeader, type StatementHeader,
} from './iso20022/camt-read.ts'
import { IsoValueError } from './iso20022/iso-value-error.ts'
import { newRowId } from '../ledger/row-id.ts'
import type { RailFolder } from './rail-folder.ts'
import type { RailOutcome } from './rail.ts'
import type { PayoutSource, RailMessagesTable, RailSubmissionsTable } from './rail-tables.ts'
import type { ClearingHouseSimulator } from './clearing-house/simulator.ts'
import type { RailCarrier } from './sftp-carrier.ts'
import type { Logger } from '../logger.ts'
import {
  insertInbound, insertOutbound, answerSubmissions, inboundApplied, outboundMessage,
  recordRefusal, returnSubmissions, submissionOf, submissionsByEndToEnd, submissionsOf,
  submittedTxIds,
  unwrittenMessages, markWritten,
} from './rail-store.ts'

// The bank's ISO 20022 rail over files (docs/operators/rails.md). A clearing cycle's EFTs
// go out as one pacs.008 file; the clearing house's status reports (pacs.002) and returns
// (pacs.004) come back as files and are applied once each.
//
// Out: the message and each payout in it are recorded first (rail_messages,
// rail_submissions), in one transaction, and the file is written from that record
// afterwards: a crash between the two writes the same file again at the next start or
// cycle, byte for byte (same id, same time, same order), never a second one with new ids. A
// payout recorded as sent is never sent again.
//
// In: a file is read whole with the defensive readers (iso20022/xml-read.ts) and refused
// whole when anything in it is wrong (malformed, a payment the bank never sent, an amount
// that is not the payment's): it is moved to archive/refused/ and the reason recorded for
// the operators. A file read well is applied by the caller (the clearing service books the
// ledger) in a transaction that records its message id, so a file delivered twice is
// applied once; it is then moved to archive/.

/**
 * The bank's message ids: `PB` and a time-ordered id's 32 hex digits (the clearing house's
 * start `CH`).
 */
export function bankMessageId(): string {
  return `PB${newRowId().replaceAll('-', '')}`
}

/** A payout as the rail sends it: the bank's customer pays the recipient. */
export interface OutgoingTransfer {
  tx_id: string
  source: PayoutSource
  /** What the source knows it by besides its tx_id (a bulk payment's batch id). */
  source_ref?: string | undefined
  amount: bigint
  /** The bank's customer: its account at the bank (the bank's own branch code goes with it). */
  debtor: Omit<IsoParty, 'branch_code'>
  creditor: IsoParty
  ref: string
}

/** A status report's answer for one of the bank's payouts. */
export interface PayoutStatus {
  tx_id: string
  source: PayoutSource
  source_ref: string | null
  /** Undefined while the clearing house has not decided (e.g. PDNG). */
  outcome: RailOutcome | undefined
  status: string
  reason_code: string | null
}

/** A return of one of the bank's payouts. */
export interface PayoutReturn {
  tx_id: string
  reason: string
  reason_code: string
}

/** What a handler of incoming credits decided: those it sends back, and why. */
export interface IncomingOutcome {
  credited: number
  returns: Array<{ credit: IncomingCredit; reason_code: string; text: string }>
}

/**
 * Books another bank's credits to the bank's accounts in the message's transaction (each
 * end-to-end id once) and names those to send back (an unknown account: AC01).
 */
export type IncomingHandler<C = unknown> = (trx: Kysely<Database>, messageId: string,
  credits: IncomingCredit[], checked: C) => Promise<IncomingOutcome>

/**
 * What is asked of an incoming message's credits before its transaction opens (their payers'
 * sanctions screening, which reads on a connection of its own): handed to the handler.
 */
export type IncomingCheck<C> = (credits: IncomingCredit[]) => Promise<C>

/**
 * A statement (camt.053) or notification (camt.054) of the bank's account at the clearing
 * house, checked whole: its entries are read again, in chunks, when it is recorded.
 */
export type AccountReport =
  | { message: typeof camt053_message; header: StatementHeader;
    opened: OpenedMessage<StatementHeader, AccountEntry> }
  | { message: typeof camt054_message; header: AccountReportHeader;
    opened: OpenedMessage<AccountReportHeader, AccountEntry> }

/**
 * Records the clearing house's statements (reconciliation): `refusal` says why a report
 * cannot be the bank's (another account), `record` keeps it in the message's transaction.
 */
export interface StatementHandler {
  refusal(report: AccountReport): string | undefined
  record(trx: Kysely<Database>, messageId: string, report: AccountReport): Promise<void>
}

/** An inbound file read whole: what the caller applies. */
export type InboundMessage =
  | { kind: 'incoming'; name: string; message_id: string; sha256: string;
    credits: IncomingCredit[] }
  | { kind: 'status'; name: string; message_id: string; sha256: string;
    statuses: PayoutStatus[] }
  | { kind: 'return'; name: string; message_id: string; sha256: string;
    returns: PayoutReturn[] }
  | { kind: 'statement'; name: string; message_id: string; sha256: string;
    report: AccountReport }

/** What reading an inbound file gave. */
export type InboundRead =
  | InboundMessage
  | { kind: 'applied'; name: string }
  | { kind: 'refused'; name: string; reason: string }

/** How a status report's answers were booked: counted by what the payouts became. */
export interface SettledCounts {
  settled: number
  failed: number
  invalid: number
}

/** What a pass over the inbound files applied. */
export interface InboundSummary extends SettledCounts {
  /** Payouts reversed by returns. */
  returned: number
  /** Other banks' credits booked to the bank's accounts. */
  credited: number
  files_applied: number
  files_refused: number
}

/**
 * Books the answers to one source's payouts in the report's transaction (only those still
 * Pending change), and counts them.
 */
export type StatusHandler = (trx: Kysely<Database>, statuses: PayoutStatus[]) =>
  Promise<SettledCounts>

/**
 * Books returns in the message's transaction: how many payouts it reversed, and those still
 * Pending (the message then waits for a later pass, and nothing of it is kept).
 */
export type ReturnHandler = (trx: Kysely<Database>, returns: PayoutReturn[]) =>
  Promise<{ reversed: number; waiting: number }>

/** A return file whose payments have not all settled yet: it waits for a later pass. */
class ReturnsWaiting extends Error {}

const incoming_prefix = `${pacs008_message_name.slice(0, 8)}.`
const status_prefix = `${pacs002_message.slice(0, 8)}.`
const return_prefix = `${pacs004_message.slice(0, 8)}.`
const statement_prefix = `${camt053_message.slice(0, 8)}.`
const notification_prefix = `${camt054_message.slice(0, 8)}.`

/** The order inbound kinds are applied in: answers, returns, credits, then statements. */
const inbound_order = [status_prefix, return_prefix, incoming_prefix, notification_prefix,
  statement_prefix]

export class IsoRail {
  constructor(
    private readonly db: Kysely<Database>,
    readonly folder: RailFolder,
    private readonly clock: Clock,
    /** The bank's own branch code: its payments' DbtrAgt. */
    private readonly branchCode: string,
    private readonly log: Logger,
    /** The sandbox's clearing house (undefined in production: a real one answers). */
    private readonly simulator: ClearingHouseSimulator | undefined,
    /** Where RTCs go; undefined when none is configured (they then stay Pending). */
    private readonly gateway: RtcGateway | undefined,
    /** Carries the folder's files to and from the clearing house (SFTP) around each exchange. */
    readonly carrier?: RailCarrier,
  ) {}

  private readonly statusHandlers = new Map<PayoutSource, StatusHandler>()
  private returnHandler: ReturnHandler | undefined
  private incomingHandler: IncomingHandler | undefined
  private incomingCheck: IncomingCheck<unknown> | undefined
  private statementHandler: StatementHandler | undefined

  /** The clearing house's statements of the bank's account are recorded by one handler. */
  handleStatements(handler: StatementHandler): void {
    assert(this.statementHandler === undefined, 'statements are handled twice')
    this.statementHandler = handler
  }

  /** Another bank's credits to the bank's accounts are booked by one handler. */
  handleIncoming<C>(handler: IncomingHandler<C>, check?: IncomingCheck<C>): void {
    assert(this.incomingHandler === undefined, 'incoming credits are handled twice')
    this.incomingHandler = handler as IncomingHandler
    this.incomingCheck = check
  }

  /** The capability whose payouts `source` names books their status reports' answers. */
  handleStatuses(source: PayoutSource, handler: StatusHandler): void {
    assert(!this.statusHandlers.has(source), `${source} answers are handled twice`)
    this.statusHandlers.set(source, handler)
  }

  /** Returns are booked by one handler whatever the payout (a reversal of its row). */
  handleReturns(handler: ReturnHandler): void {
    assert(this.returnHandler === undefined, 'returns are handled twice')
    this.returnHandler = handler
  }

  /** Whether a clearing house answers at once (the sandbox's simulator). */
  get answersAtOnce(): boolean {
    return this.simulator !== undefined
  }

  /**
   * The sandbox's clearing house answers what waits in outbound/ (nothing in production),
   * then every inbound file is applied. `cycleStart`: a clearing cycle begins, and the
   * simulator also delivers the returns it held back since the last one.
   */
  async exchange(cycleStart = false): Promise<InboundSummary> {
    if (this.simulator) await this.simulator.pass(cycleStart)
    return this.carrier ? this.carrier.around(() => this.applyInbound()) : this.applyInbound()
  }

  /**
   * Applies every inbound file waiting: a status report books the payouts it answers, a
   * return reverses them; each file whole, once, in one transaction with its record; a
   * refused file is set aside with its reason.
   */
  async applyInbound(): Promise<InboundSummary> {
    const summary: InboundSummary = { settled: 0, failed: 0, invalid: 0, returned: 0,
      credited: 0, files_applied: 0, files_refused: 0 }
    for (const name of await this.inboundFiles()) {
      const read = await this.readInbound(name).catch((error: NodeJS.ErrnoException) => {
        // Taken meanwhile by another pass (another instance, the sandbox's own request).
        if (error.code === 'ENOENT') return undefined
        throw error
      })
      if (!read) continue
      if (read.kind === 'refused') {
        this.log.warn({ file: name, reason: read.reason }, 'rail: inbound file refused')
        await this.refuse(name, read.reason)
        summary.files_refused++
        continue
      }
      if (read.kind !== 'applied' && !(await this.apply(read, summary))) continue
      await this.archive(name)
    }
    // The returns of incoming credits the bank sends back (recorded as they were decided).
    await this.writeUnwritten()
    return summary
  }

  /**
   * Books an incoming message's credits (the handler), and records a return (pacs.004) of
   * those it sends back, to be written into outbound/ after the transaction commits.
   */
  private async applyIncoming(trx: Kysely<Database>,
      message: Extract<InboundMessage, { kind: 'incoming' }>, checked: unknown): Promise<number> {
    assert(this.incomingHandler, 'no handler books incoming credits')
    const outcome = await this.incomingHandler(trx, message.message_id, message.credits,
      checked)
    if (outcome.returns.length === 0) return outcome.credited
    const messageId = bankMessageId()
    const now = this.clock.now()
    const rows = outcome.returns.map(({ credit, reason_code, text }) => ({
      // Its own id (RtrId), as the clearing house's returns carry one.
      return_id: bankMessageId(),
      original_message_id: message.message_id,
      original_end_to_end_id: credit.end_to_end_id,
      ...(credit.tx_id === null ? {} : { original_tx_id: credit.tx_id }),
      returned_amount: credit.amount, reason_code, additional_information: text,
    }))
    const body = await pacs004Text({ message_id: messageId, created_at: now }, rows)
    await insertOutbound(trx, {
      message_id: messageId, kind: pacs004_message, payment_type: null,
      file_name: fileName(pacs004_message, messageId), transaction_count: rows.length,
      control_sum: rows.reduce((sum, row) => sum + row.returned_amount, 0n), created_at: now,
      settlement_date: null, written_at: null, body,
    }, [])
    return outcome.credited
  }

  /** Applies one message; false when it must wait (a return of a payment not yet settled). */
  private async apply(message: InboundMessage, summary: InboundSummary): Promise<boolean> {
    const counts = { settled: 0, failed: 0, invalid: 0, returned: 0, credited: 0 }
    // Before the transaction: the payers' screening reads on a connection of its own.
    const checked = message.kind === 'incoming' ? await this.incomingCheck?.(message.credits)
      : undefined
    try {
      await this.db.transaction().execute(async (trx) => {
        if (!(await this.recordApplied(trx, message))) return
        if (message.kind === 'status') {
          for (const [source, statuses] of bySource(message.statuses)) {
            const handler = this.statusHandlers.get(source)
            assert(handler, `no handler books ${source} payouts' answers`)
            const booked = await handler(trx, statuses)
            counts.settled += booked.settled
            counts.failed += booked.failed
            counts.invalid += booked.invalid
          }
          return
        }
        if (message.kind === 'incoming') {
          counts.credited += await this.applyIncoming(trx, message, checked)
          return
        }
        if (message.kind === 'statement') {
          assert(this.statementHandler, 'no handler records statements')
          await this.statementHandler.record(trx, message.message_id, message.report)
          return
        }
        assert(this.returnHandler, 'no handler books returns')
        const booked = await this.returnHandler(trx, message.returns)
        if (booked.waiting > 0) throw new ReturnsWaiting()
        counts.returned += booked.reversed
      })
    } catch (error) {
      if (!(error instanceof ReturnsWaiting)) throw error
      this.log.info({ file: message.name }, 'rail: a return waits for its payment to settle')
      return false
    }
    summary.settled += counts.settled
    summary.failed += counts.failed
    summary.invalid += counts.invalid
    summary.returned += counts.returned
    summary.credited += counts.credited
    summary.files_applied++
    return true
  }

  /**
   * Why the rail can never carry this payout (a value its message cannot hold: a name with
   * a control character, a reference too long), or undefined when it can.
   */
  unsendable(transfer: OutgoingTransfer): string | undefined {
    try {
      checkRow({ ...transfer, debtor: { ...transfer.debtor, branch_code: this.branchCode } })
      return undefined
    } catch (error) {
      if (error instanceof IsoValueError) return error.message
      throw error
    }
  }

  /** Those of the payouts that were sent already. */
  submitted(txIds: readonly string[]): Promise<Set<string>> {
    return submittedTxIds(this.db, txIds)
  }

  /**
   * Sends the payouts as one pacs.008 (EFT) for the settlement day given: recorded, then
   * written into outbound/. Resolves with the message id.
   */
  async submitEft(transfers: readonly OutgoingTransfer[],
      settlementDate: string): Promise<string> {
    assert(transfers.length > 0, 'a pacs.008 carries at least one payment')
    const messageId = bankMessageId()
    const controlSum = transfers.reduce((sum, t) => sum + t.amount, 0n)
    await this.db.transaction().execute(async (trx) => {
      await insertOutbound(trx, {
        message_id: messageId, kind: pacs008_message_name, payment_type: 'EFT',
        file_name: fileName(pacs008_message_name, messageId),
        transaction_count: transfers.length, control_sum: controlSum,
        created_at: this.clock.now(), settlement_date: settlementDate,
        written_at: null,
      }, transfers.map((t, position) => submissionRow(t, messageId, position)))
    })
    await this.writeOutbound(messageId)
    return messageId
  }

  /**
   * Pays one RTC through the gateway: recorded, then sent as its own pacs.008, and its
   * pacs.002 read. Resolves with the outcome, or undefined while there is none (no answer
   * within the bound, no gateway, a pending status): the payout stays Pending and is asked
   * about again later. A payout sent before is not sent again: the gateway is asked its
   * status (pacs.028), and sent the same message again only if it never received it.
   */
  async payRealTime(transfer: OutgoingTransfer): Promise<RailOutcome | undefined> {
    const known = await submissionOf(this.db, transfer.tx_id)
    if (known) return this.askStatus(known)
    const messageId = bankMessageId()
    const now = this.clock.now()
    const header = { message_id: messageId, created_at: now, settlement_date: toSast(now).date }
    const sent = submissionRow(transfer, messageId, 0)
    await this.db.transaction().execute((trx) => insertOutbound(trx, {
      ...header, kind: pacs008_message_name, payment_type: 'RTC',
      file_name: fileName(pacs008_message_name, messageId), transaction_count: 1,
      control_sum: transfer.amount,
      // Not a file: nothing to write again.
      written_at: now,
    }, [sent]))
    return this.sendRealTime(sent, header)
  }

  /**
   * Sends an RTC's recorded message (built from its record: the same bytes each time) and
   * reads its answer.
   */
  private async sendRealTime(sent: SentPayment, header: RtcHeader):
      Promise<RailOutcome | undefined> {
    if (!this.gateway) return undefined
    const text = await pacs008RtcText(header, this.rowOf(sent))
    const answer = await this.gateway.send('pacs.008', text)
    const status = await this.statusIn(answer, sent)
    return status === 'unknown' ? undefined : status
  }

  /** Asks the gateway the status of a payout it was sent (pacs.028). */
  private async askStatus(sent: SentPayment): Promise<RailOutcome | undefined> {
    if (!this.gateway) return undefined
    const text = await pacs028Text({ message_id: bankMessageId(), created_at: this.clock.now() },
      [{ original_message_id: sent.message_id, tx_id: sent.tx_id }])
    const answer = await this.gateway.send('pacs.028', text)
    // Never received (no answer at all is no answer in time: asked again later).
    if (answer === undefined) return undefined
    const status = await this.statusIn(answer, sent)
    if (status !== 'unknown') return status
    const message = await outboundMessage(this.db, sent.message_id)
    assert(message, `RTC message ${sent.message_id} is not recorded`)
    return this.sendRealTime(sent, { message_id: message.message_id,
      created_at: new Date(message.created_at), settlement_date: message.settlement_date ?? '' })
  }

  /**
   * The payout's outcome in a gateway's pacs.002 (recorded on its submission), undefined
   * while undecided or unreadable (logged), `unknown` when the report does not name it.
   */
  private async statusIn(answer: string | undefined,
      sent: SentPayment): Promise<RailOutcome | undefined | 'unknown'> {
    if (answer === undefined) return undefined
    const report = await readStatusReport({ content: answer }).catch((error: unknown) => {
      if (error instanceof MessageRefused) return error
      throw error
    })
    if (report instanceof MessageRefused
      || report.header.original_message_id !== sent.message_id) {
      this.log.warn({ message_id: sent.message_id, reason: report instanceof MessageRefused
        ? report.message : 'it answers another message' }, 'rail gateway: answer refused')
      return undefined
    }
    const endToEnd = endToEndIdOf(sent.tx_id)
    const item = report.items.find((i) => i.original_end_to_end_id === endToEnd)
      ?? groupItem(report.header, endToEnd)
    if (!item) return 'unknown'
    const status = statusOf(sent, item)
    if (status.outcome) {
      await answerSubmissions(this.db, [status], this.clock.now())
    }
    return status.outcome
  }

  private rowOf(s: SentPayment): CreditTransferRow {
    return creditRow(s, this.branchCode)
  }

  /** Writes again every recorded message whose file was never written whole (a crash). */
  async writeUnwritten(): Promise<number> {
    const ids = await unwrittenMessages(this.db)
    for (const id of ids) await this.writeOutbound(id)
    return ids.length
  }

  /** Writes a recorded outbound message's file from its record: the same bytes every time. */
  async writeOutbound(messageId: string): Promise<void> {
    const message = await outboundMessage(this.db, messageId)
    assert(message, `outbound message ${messageId} is not recorded`)
    if (message.body !== null) {
      await this.folder.write(this.folder.outbound, message.file_name, [message.body])
      await markWritten(this.db, messageId, this.clock.now())
      return
    }
    await this.folder.write(this.folder.outbound, message.file_name,
      recordedPacs008(this.db, this.branchCode, message))
    await markWritten(this.db, messageId, this.clock.now())
  }

  /**
   * The inbound files waiting: status reports, then returns, then credits; each kind in the
   * order it arrived (the files' times; their names, the sender's ids, need not sort by time).
   */
  async inboundFiles(): Promise<string[]> {
    const names = await this.folder.list(this.folder.inbound)
    const rank = (name: string) => {
      const kind = inbound_order.findIndex((prefix) => name.startsWith(prefix))
      return kind < 0 ? inbound_order.length : kind
    }
    const times = new Map<string, number>()
    for (const name of names) {
      times.set(name, await this.folder.modifiedAt(this.folder.inbound, name))
    }
    return names.sort((a, b) => rank(a) - rank(b) || times.get(a)! - times.get(b)!
      || (a < b ? -1 : a > b ? 1 : 0))
  }

  /** Reads an inbound file whole; see InboundRead. */
  async readInbound(name: string): Promise<InboundRead> {
    const file = path.join(this.folder.inbound, name)
    try {
      if (name.startsWith(status_prefix)) return await this.readStatuses(name, file)
      if (name.startsWith(return_prefix)) return await this.readReturns(name, file)
      if (name.startsWith(incoming_prefix)) return await this.readIncoming(name, file)
      if (name.startsWith(statement_prefix) || name.startsWith(notification_prefix)) {
        return await this.readReport(name, file)
      }
      return { kind: 'refused', name, reason: 'not a message kind the bank applies: ' +
        `${pacs002_message}, ${pacs004_message}, ${pacs008_message_name}, ${camt053_message} ` +
        `and ${camt054_message} files only (named after their kind)` }
    } catch (error) {
      if (error instanceof MessageRefused || error instanceof InboundRefusal) {
        return { kind: 'refused', name, reason: error.message }
      }
      throw error
    }
  }

  /**
   * `applied` when a message of this id was applied from the same bytes (a second delivery);
   * refused when other bytes come under an id already applied.
   */
  private async seen(name: string, messageId: string,
      sha256: string): Promise<InboundRead | undefined> {
    const applied = await inboundApplied(this.db, messageId)
    if (applied === undefined) return undefined
    if (applied === sha256) return { kind: 'applied', name }
    throw new InboundRefusal(`message id ${messageId} was applied already from another file ` +
      `(SHA-256 ${applied}); a message id is never reused`)
  }

  private async readStatuses(name: string, file: string): Promise<InboundRead> {
    const report = await readStatusReport({ file })
    const sha256 = await sha256Of(file)
    const seen = await this.seen(name, report.header.message_id, sha256)
    if (seen) return seen
    if (report.header.original_message_name !== pacs008_message_name) {
      throw new InboundRefusal(`answers a ${report.header.original_message_name}; ` +
        `the bank sends ${pacs008_message_name}`)
    }
    if (report.items.length === 0) {
      return { kind: 'status', name, message_id: report.header.message_id, sha256,
        statuses: await this.groupStatuses(report.header) }
    }
    const sent = await submissionsByEndToEnd(this.db,
      report.items.map((item) => item.original_end_to_end_id))
    const statuses = report.items.map((item, index) => {
      const submission = sent.get(item.original_end_to_end_id)
      if (!submission || submission.message_id !== report.header.original_message_id) {
        throw new InboundRefusal(`status ${index + 1} names end-to-end id ` +
          `${item.original_end_to_end_id}, which message ` +
          `${report.header.original_message_id} of the bank did not carry`)
      }
      return statusOf(submission, item)
    })
    return { kind: 'status', name, message_id: report.header.message_id, sha256, statuses }
  }

  /**
   * A report of the whole message only (GrpSts, no payment's status: a file rejected whole,
   * e.g. FF01): that status for each payment of the message.
   */
  private async groupStatuses(header: StatusReportHeader): Promise<PayoutStatus[]> {
    const message = await outboundMessage(this.db, header.original_message_id)
    if (!message) {
      throw new InboundRefusal(`answers message ${header.original_message_id}, ` +
        'which the bank never sent')
    }
    const statuses: PayoutStatus[] = []
    const item = (endToEnd: string): TransactionStatus => ({
      original_end_to_end_id: endToEnd, original_tx_id: null,
      status: header.group_status ?? 'PDNG', reason: header.group_reason,
      additional_info: null,
    })
    for await (const page of submissionsOf(this.db, header.original_message_id)) {
      for (const submission of page) statuses.push(statusOf(submission,
        item(submission.end_to_end_id)))
    }
    return statuses
  }

  private async readReturns(name: string, file: string): Promise<InboundRead> {
    const message = await readPaymentReturn({ file })
    const sha256 = await sha256Of(file)
    const seen = await this.seen(name, message.header.message_id, sha256)
    if (seen) return seen
    const sent = await submissionsByEndToEnd(this.db,
      message.items.map((item) => item.original_end_to_end_id))
    const returns = message.items.map((item, index) => {
      const submission = sent.get(item.original_end_to_end_id)
      const where = `return ${index + 1} (end-to-end id ${item.original_end_to_end_id})`
      if (!submission) throw new InboundRefusal(`${where} names no payment the bank sent`)
      if (submission.status === 'RJCT') {
        throw new InboundRefusal(`${where} returns a payment the clearing house rejected: ` +
          'it was never paid')
      }
      if (BigInt(submission.amount) !== item.amount) {
        throw new InboundRefusal(`${where} returns ${item.amount} cents of a payment of ` +
          `${submission.amount}: the bank takes back whole payments only`)
      }
      const text = item.reason_text ?? reasonCode(item.reason.code)?.text ?? 'returned'
      return { tx_id: submission.tx_id, reason_code: item.reason.code,
        reason: `${item.reason.code}: ${text}` }
    })
    return { kind: 'return', name, message_id: message.header.message_id, sha256, returns }
  }

  private async readIncoming(name: string, file: string): Promise<InboundRead> {
    const message = await readCreditTransfers({ file })
    const sha256 = await sha256Of(file)
    const seen = await this.seen(name, message.header.message_id, sha256)
    if (seen) return seen
    const empty = message.items.findIndex((credit) => credit.amount <= 0n)
    if (empty >= 0) {
      throw new InboundRefusal(`credit ${empty + 1} (end-to-end id ` +
        `${message.items[empty]!.end_to_end_id}) is of no money: a credit is of at least a cent`)
    }
    return { kind: 'incoming', name, message_id: message.header.message_id, sha256,
      credits: message.items }
  }

  private async readReport(name: string, file: string): Promise<InboundRead> {
    const report: AccountReport = name.startsWith(statement_prefix)
      ? await openStatement({ file }).then((opened) =>
        ({ message: camt053_message, header: opened.header, opened }))
      : await openNotification({ file }).then((opened) =>
        ({ message: camt054_message, header: opened.header, opened }))
    const sha256 = await sha256Of(file)
    const seen = await this.seen(name, report.header.message_id, sha256)
    if (seen) return seen
    assert(this.statementHandler, 'no handler records statements')
    const refusal = this.statementHandler.refusal(report)
    if (refusal !== undefined) throw new InboundRefusal(refusal)
    return { kind: 'statement', name, message_id: report.header.message_id, sha256, report }
  }

  /**
   * Records the message applied, in the caller's transaction (which books it): its statuses
   * or returns on the payouts they name. False when it was applied before (by another
   * instance meanwhile): the caller rolls back.
   */
  async recordApplied(trx: Kysely<Database>, message: InboundMessage): Promise<boolean> {
    const now = this.clock.now()
    const recorded = await insertInbound(trx, {
      message_id: message.message_id, kind: kindOf(message),
      transaction_count: countOf(message),
      file_name: message.name, created_at: now,
      sha256: message.sha256,
    })
    if (!recorded) return false
    if (message.kind === 'status') await answerSubmissions(trx, message.statuses, now)
    else if (message.kind === 'return') await returnSubmissions(trx, message.returns, now)
    return true
  }

  /** Moves an applied (or already applied) file to archive/; gone already is as good. */
  async archive(name: string): Promise<void> {
    await this.folder.move(this.folder.inbound, name, this.folder.archive).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
  }

  /** Refuses a file whole: its reason recorded for the operators, the file to archive/refused/. */
  async refuse(name: string, reason: string): Promise<void> {
    const sha256 = await sha256Of(path.join(this.folder.inbound, name))
    await recordRefusal(this.db, { file_name: name, sha256, reason,
      refused_at: this.clock.now() })
    await this.folder.move(this.folder.inbound, name, this.folder.refused)
  }
}

/**
 * The payment's status from a report of its whole message only (GrpSts, no payment named):
 * undefined when it says the gateway never received the message (reason NOOR: the bank
 * sends it again) or says nothing of it.
 */
function groupItem(header: StatusReportHeader, endToEnd: string): TransactionStatus | undefined {
  if (header.group_status === null || header.group_reason?.code === not_received) return undefined
  return { original_end_to_end_id: endToEnd, original_tx_id: null, status: header.group_status,
    reason: header.group_reason, additional_info: null }
}

function kindOf(message: InboundMessage): string {
  switch (message.kind) {
    case 'status': return pacs002_message
    case 'return': return pacs004_message
    case 'incoming': return pacs008_message_name
    case 'statement': return message.report.message
  }
}

function countOf(message: InboundMessage): number {
  switch (message.kind) {
    case 'status': return message.statuses.length
    case 'return': return message.returns.length
    case 'incoming': return message.credits.length
    case 'statement': return message.report.opened.count
  }
}

function bySource(statuses: PayoutStatus[]): Map<PayoutSource, PayoutStatus[]> {
  const grouped = new Map<PayoutSource, PayoutStatus[]>()
  for (const status of statuses) {
    const list = grouped.get(status.source)
    if (list) list.push(status)
    else grouped.set(status.source, [status])
  }
  return grouped
}

/** A file refused for what it says, not how it is written (a payment the bank never sent). */
class InboundRefusal extends Error {}

type Submission = Selectable<RailSubmissionsTable>

/** What a message says of a payout it carries (its record, or the row about to be one). */
type SentPayment = Pick<Submission, 'tx_id' | 'message_id' | 'source' | 'source_ref' | 'ref'
  | 'debtor_name' | 'debtor_account' | 'creditor_name' | 'creditor_account'
  | 'creditor_branch'> & { amount: bigint | string | number }

/** An RTC message's header, as its record keeps it. */
interface RtcHeader {
  message_id: string
  created_at: Date
  settlement_date: string
}

function submissionRow(t: OutgoingTransfer, messageId: string,
    position: number): Insertable<RailSubmissionsTable> & SentPayment {
  return {
    tx_id: t.tx_id, source: t.source, source_ref: t.source_ref ?? null,
    message_id: messageId, position, end_to_end_id: endToEndIdOf(t.tx_id),
    amount: t.amount, debtor_name: t.debtor.name, debtor_account: t.debtor.account_number,
    creditor_name: t.creditor.name, creditor_account: t.creditor.account_number,
    creditor_branch: t.creditor.branch_code, ref: t.ref,
  }
}

/** A payout as a pacs.008 carries it: the bank's customer, with the bank's branch code. */
function creditRow(s: SentPayment, branchCode: string): CreditTransferRow {
  return {
    tx_id: s.tx_id, amount: BigInt(s.amount), ref: s.ref,
    debtor: { name: s.debtor_name, account_number: s.debtor_account, branch_code: branchCode },
    creditor: { name: s.creditor_name, account_number: s.creditor_account,
      branch_code: s.creditor_branch },
  }
}

/**
 * A recorded pacs.008 of the bank's, made again from its record (rail_messages and its
 * rail_submissions in order): the same bytes every time, in chunks.
 */
export function recordedPacs008(db: Kysely<Database>, branchCode: string,
    message: Pick<Selectable<RailMessagesTable>, 'message_id' | 'created_at' | 'payment_type'
      | 'transaction_count' | 'control_sum' | 'settlement_date'>):
    AsyncGenerator<string, void, undefined> {
  const header = {
    message_id: message.message_id,
    created_at: new Date(message.created_at),
    payment_type: message.payment_type ?? 'EFT',
    number_of_transactions: message.transaction_count,
    control_sum: BigInt(message.control_sum),
    settlement_date: message.settlement_date ?? '',
  }
  async function* rows(): AsyncGenerator<CreditTransferRow> {
    for await (const page of submissionsOf(db, message.message_id)) {
      for (const s of page) yield creditRow(s, branchCode)
    }
  }
  return pacs008Chunks(header, rows())
}

function fileName(kind: string, messageId: string): string {
  return `${kind.slice(0, 8)}.${messageId}.xml`
}

function statusOf(submission: { tx_id: string; source: PayoutSource; source_ref: string | null },
    item: TransactionStatus): PayoutStatus {
  const code = item.reason?.code ?? null
  const base = { tx_id: submission.tx_id, source: submission.source,
    source_ref: submission.source_ref, status: item.status, reason_code: code }
  if (item.status === 'ACSC' || item.status === 'ACCC') {
    return { ...base, outcome: { status: 'accepted', reference: item.original_end_to_end_id } }
  }
  if (item.status !== 'RJCT' || !item.reason) return { ...base, outcome: undefined }
  const text = item.additional_info ?? reasonCode(item.reason.code)?.text ?? 'rejected'
  const reason = `${item.reason.code}: ${text}`
  const outcome = rejectionOutcome(item.reason.code, item.reason.proprietary)
  return { ...base, outcome: { status: outcome === 'Invalid' ? 'invalid' : 'failed', reason } }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}
