import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import path from 'node:path'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { assert } from '../errors.ts'
import type { Database } from '../schema.ts'
import { endToEndIdOf } from './iso20022/end-to-end-id.ts'
import { checkRow, pacs008Chunks, pacs008_message_name, type CreditTransferRow,
  type IsoParty } from './iso20022/pacs008-write.ts'
import { pacs002_message, readStatusReport, type TransactionStatus }
  from './iso20022/pacs002-read.ts'
import { pacs004_message, readPaymentReturn } from './iso20022/pacs004-read.ts'
import { reasonCode, rejectionOutcome } from './iso20022/reason-codes.ts'
import { MessageRefused } from './iso20022/xml-read.ts'
import { IsoValueError } from './iso20022/iso-value-error.ts'
import { newRowId } from '../ledger/row-id.ts'
import type { RailFolder } from './rail-folder.ts'
import type { RailOutcome } from './rail.ts'
import {
  insertInbound, insertOutbound, answerSubmissions, inboundApplied, outboundMessage,
  recordRefusal, returnSubmissions, submissionsByEndToEnd, submissionsOf, submittedTxIds,
  unwrittenMessages, markWritten,
} from './rail-store.ts'

// The bank's ISO 20022 rail over files (RULINGS, "Rails: ISO 20022"). A clearing cycle's EFTs
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
  amount: bigint
  /** The bank's customer: its account at the bank (the bank's own branch code goes with it). */
  debtor: Omit<IsoParty, 'branch_code'>
  creditor: IsoParty
  ref: string
}

/** A status report's answer for one of the bank's payouts. */
export interface PayoutStatus {
  tx_id: string
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

/** An inbound file read whole: what the caller applies. */
export type InboundMessage =
  | { kind: 'status'; name: string; message_id: string; sha256: string;
    statuses: PayoutStatus[] }
  | { kind: 'return'; name: string; message_id: string; sha256: string;
    returns: PayoutReturn[] }

/** What reading an inbound file gave. */
export type InboundRead =
  | InboundMessage
  | { kind: 'applied'; name: string }
  | { kind: 'refused'; name: string; reason: string }

const status_prefix = `${pacs002_message.slice(0, 8)}.`
const return_prefix = `${pacs004_message.slice(0, 8)}.`

export class IsoRail {
  constructor(
    private readonly db: Kysely<Database>,
    readonly folder: RailFolder,
    private readonly clock: Clock,
    /** The bank's own branch code: its payments' DbtrAgt. */
    private readonly branchCode: string,
  ) {}

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
  async submitEft(transfers: readonly OutgoingTransfer[], settlementDate: string): Promise<string> {
    assert(transfers.length > 0, 'a pacs.008 carries at least one payment')
    const messageId = bankMessageId()
    const controlSum = transfers.reduce((sum, t) => sum + t.amount, 0n)
    await this.db.transaction().execute(async (trx) => {
      await insertOutbound(trx, {
        message_id: messageId, kind: pacs008_message_name, payment_type: 'EFT',
        file_name: fileName(pacs008_message_name, messageId),
        transaction_count: transfers.length, control_sum: controlSum,
        created_at: this.clock.now(), settlement_date: settlementDate,
      }, transfers.map((t, position) => ({
        tx_id: t.tx_id, message_id: messageId, position, end_to_end_id: endToEndIdOf(t.tx_id),
        amount: t.amount, debtor_name: t.debtor.name, debtor_account: t.debtor.account_number,
        creditor_name: t.creditor.name, creditor_account: t.creditor.account_number,
        creditor_branch: t.creditor.branch_code, ref: t.ref,
      })))
    })
    await this.writeOutbound(messageId)
    return messageId
  }

  /** Writes again every recorded message whose file was never written whole (a crash). */
  async writeUnwritten(): Promise<number> {
    const ids = await unwrittenMessages(this.db)
    for (const id of ids) await this.writeOutbound(id)
    return ids.length
  }

  /** Writes a recorded outbound message's file from its record: the same bytes every time. */
  async writeOutbound(messageId: string): Promise<void> {
    const branchCode = this.branchCode
    const message = await outboundMessage(this.db, messageId)
    assert(message, `outbound message ${messageId} is not recorded`)
    const header = {
      message_id: message.message_id,
      created_at: new Date(message.created_at),
      payment_type: message.payment_type ?? 'EFT',
      number_of_transactions: message.transaction_count,
      control_sum: BigInt(message.control_sum),
      settlement_date: message.settlement_date ?? '',
    }
    const db = this.db
    async function* rows(): AsyncGenerator<CreditTransferRow> {
      for await (const page of submissionsOf(db, messageId)) {
        for (const s of page) {
          yield {
            tx_id: s.tx_id, amount: BigInt(s.amount), ref: s.ref,
            debtor: { name: s.debtor_name, account_number: s.debtor_account,
              branch_code: branchCode },
            creditor: { name: s.creditor_name, account_number: s.creditor_account,
              branch_code: s.creditor_branch },
          }
        }
      }
    }
    await this.folder.write(this.folder.outbound, message.file_name, pacs008Chunks(header, rows()))
    await markWritten(this.db, messageId, this.clock.now())
  }

  /** The inbound files waiting: status reports before returns, each kind in name order. */
  async inboundFiles(): Promise<string[]> {
    const names = await this.folder.list(this.folder.inbound)
    const rank = (name: string) => name.startsWith(status_prefix) ? 0
      : name.startsWith(return_prefix) ? 1 : 2
    return names.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
  }

  /** Reads an inbound file whole; see InboundRead. */
  async readInbound(name: string): Promise<InboundRead> {
    const file = path.join(this.folder.inbound, name)
    try {
      if (name.startsWith(status_prefix)) return await this.readStatuses(name, file)
      if (name.startsWith(return_prefix)) return await this.readReturns(name, file)
      return { kind: 'refused', name, reason: 'not a message kind the bank applies: ' +
        `${pacs002_message} and ${pacs004_message} files only (named after their kind)` }
    } catch (error) {
      if (error instanceof MessageRefused || error instanceof InboundRefusal) {
        return { kind: 'refused', name, reason: error.message }
      }
      throw error
    }
  }

  private async readStatuses(name: string, file: string): Promise<InboundRead> {
    const report = await readStatusReport({ file })
    if (await inboundApplied(this.db, report.header.message_id)) return { kind: 'applied', name }
    if (report.header.original_message_name !== pacs008_message_name) {
      throw new InboundRefusal(`answers a ${report.header.original_message_name}; ` +
        `the bank sends ${pacs008_message_name}`)
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
      return statusOf(submission.tx_id, item)
    })
    return { kind: 'status', name, message_id: report.header.message_id,
      sha256: await sha256Of(file), statuses }
  }

  private async readReturns(name: string, file: string): Promise<InboundRead> {
    const message = await readPaymentReturn({ file })
    if (await inboundApplied(this.db, message.header.message_id)) return { kind: 'applied', name }
    const sent = await submissionsByEndToEnd(this.db,
      message.items.map((item) => item.original_end_to_end_id))
    const returns = message.items.map((item, index) => {
      const submission = sent.get(item.original_end_to_end_id)
      const where = `return ${index + 1} (end-to-end id ${item.original_end_to_end_id})`
      if (!submission) throw new InboundRefusal(`${where} names no payment the bank sent`)
      if (BigInt(submission.amount) !== item.amount) {
        throw new InboundRefusal(`${where} returns ${item.amount} cents of a payment of ` +
          `${submission.amount}: the bank takes back whole payments only`)
      }
      const text = item.reason_text ?? reasonCode(item.reason.code)?.text ?? 'returned'
      return { tx_id: submission.tx_id, reason_code: item.reason.code,
        reason: `${item.reason.code}: ${text}` }
    })
    return { kind: 'return', name, message_id: message.header.message_id,
      sha256: await sha256Of(file), returns }
  }

  /**
   * Records the message applied, in the caller's transaction (which books it): its statuses
   * or returns on the payouts they name. False when it was applied before (by another
   * instance meanwhile): the caller rolls back.
   */
  async recordApplied(trx: Kysely<Database>, message: InboundMessage): Promise<boolean> {
    const now = this.clock.now()
    const count = message.kind === 'status' ? message.statuses.length : message.returns.length
    const recorded = await insertInbound(trx, {
      message_id: message.message_id,
      kind: message.kind === 'status' ? pacs002_message : pacs004_message,
      file_name: message.name, transaction_count: count, created_at: now,
      sha256: message.sha256,
    })
    if (!recorded) return false
    if (message.kind === 'status') await answerSubmissions(trx, message.statuses, now)
    else await returnSubmissions(trx, message.returns)
    return true
  }

  /** Moves an applied (or already applied) file to archive/. */
  archive(name: string): Promise<void> {
    return this.folder.move(this.folder.inbound, name, this.folder.archive)
  }

  /** Refuses a file whole: its reason recorded for the operators, the file to archive/refused/. */
  async refuse(name: string, reason: string): Promise<void> {
    const sha256 = await sha256Of(path.join(this.folder.inbound, name))
    await recordRefusal(this.db, { file_name: name, sha256, reason,
      refused_at: this.clock.now() })
    await this.folder.move(this.folder.inbound, name, this.folder.refused)
  }
}

/** A file refused for what it says, not how it is written (a payment the bank never sent). */
class InboundRefusal extends Error {}

function fileName(kind: string, messageId: string): string {
  return `${kind.slice(0, 8)}.${messageId}.xml`
}

function statusOf(txId: string, item: TransactionStatus): PayoutStatus {
  const code = item.reason?.code ?? null
  const base = { tx_id: txId, status: item.status, reason_code: code }
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
