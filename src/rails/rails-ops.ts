import type { Kysely } from 'kysely'
import type { z } from 'zod'
import type { Clock } from '../clock.ts'
import {
  decodeSeqCursor, decodeTimeIdCursor, encodeTimeIdCursor, invalid_cursor_message, seqPage,
} from '../contract/cursor.ts'
import { formatTimestamp } from '../contract/format.ts'
import { Invalid, NotFound } from '../errors.ts'
import { centsText } from '../ledger/cents.ts'
import type { Database } from '../schema.ts'
import {
  railsOpsOperations, type RailMessageView, type RailPaymentView, type RailRefusalView,
  type UnansweredPayoutView,
} from './rails-ops-contract.ts'
import { messageBody } from './rails-ops-body.ts'
import type { RailFolder } from './rail-folder.ts'
import {
  messagePage, messagesById, paymentPage, refusalPage, unansweredCount, unansweredPage,
  type MessagePosition, type MessageRow,
} from './rails-ops-store.ts'

// What operators see of the ISO 20022 rail (rails-ops-contract.ts): the store's rows in the
// wire's shape, the lists' cursors, and a message's XML when asked (rails-ops-body.ts).

type Request<K extends keyof typeof railsOpsOperations> =
  z.output<(typeof railsOpsOperations)[K]['request']>

/** The cursors' tags: a cursor of one list is refused by another. */
const messages_tag = 'm'
const payments_tag = 'q'
const refusals_tag = 'r'
const unanswered_tag = 'u'

const minute_ms = 60_000

export class RailsOps {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly folder: RailFolder,
    /** The bank's branch code: the debtor agent of the messages it made again. */
    private readonly branchCode: string,
    /** BANK_RAIL_UNANSWERED_AFTER_MINUTES. */
    private readonly unansweredAfterMinutes: number,
  ) {}

  async messages(request: Request<'messages'>) {
    const after = request.cursor === undefined ? undefined : decodeMessageCursor(request.cursor)
    const rows = await messagePage(this.db, request, request.limit, after)
    const page = rows.slice(0, request.limit)
    const last = page.at(-1)
    const more = rows.length > request.limit && last !== undefined
    return { messages: page.map(messageView),
      ...(more ? { next_cursor: encodeMessageCursor(positionOf(last)) } : {}) }
  }

  async message(request: Request<'message'>) {
    const found = await messagesById(this.db, request.message_id, request.direction)
    if (found.length === 0) throw new NotFound('rail message')
    if (found.length > 1) {
      throw Invalid.field('direction', `message ${request.message_id} names one message each ` +
        'way: give direction out or in')
    }
    const row = found[0]!
    const from = request.cursor === undefined ? 0 : decodePaymentCursor(request.cursor)
    const rows = row.direction === 'out'
      ? await paymentPage(this.db, row.message_id, from, request.limit) : []
    // A payout's cursor is its position + 1: a sequence of at least 1.
    const { page, next_cursor } = seqPage(rows, request.limit, payments_tag,
      (p) => BigInt(p.position + 1))
    const body = request.include_body
      ? { body: await messageBody(this.db, this.folder, this.branchCode, row) } : {}
    return { message: messageView(row), payments: page.map(paymentView),
      ...(next_cursor ? { next_cursor } : {}), ...body }
  }

  async refusals(request: Request<'refusals'>) {
    const before = request.cursor === undefined ? undefined
      : decodeSeqCursor(refusals_tag, request.cursor)
    if (request.cursor !== undefined && before === undefined) throw invalidCursor()
    const rows = await refusalPage(this.db, request.limit, before)
    const { page, next_cursor } = seqPage(rows, request.limit, refusals_tag, (r) => r.id)
    return { refusals: page.map(refusalView), ...(next_cursor ? { next_cursor } : {}) }
  }

  async unanswered(request: Request<'unanswered'>) {
    const now = this.clock.now()
    const minutes = request.older_than_minutes ?? this.unansweredAfterMinutes
    const filter = { sentBy: new Date(now.getTime() - minutes * minute_ms),
      partner_id: request.partner_id, payment_type: request.payment_type }
    const after = request.cursor === undefined ? undefined
      : decodeTimeIdCursor(unanswered_tag, request.cursor)
    if (request.cursor !== undefined && after === undefined) throw invalidCursor()
    const [rows, total] = await Promise.all([
      unansweredPage(this.db, filter, request.limit, after),
      unansweredCount(this.db, filter),
    ])
    const page = rows.slice(0, request.limit)
    const last = page.at(-1)
    const more = rows.length > request.limit && last !== undefined
    return {
      as_of: formatTimestamp(now),
      older_than_minutes: minutes,
      after_minutes_setting: this.unansweredAfterMinutes,
      total,
      payouts: page.map((row) => unansweredView(row, now)),
      ...(more ? { next_cursor: encodeTimeIdCursor(unanswered_tag, new Date(last.created_at),
        last.tx_id) } : {}),
    }
  }
}

function invalidCursor(): Invalid {
  return Invalid.field('cursor', invalid_cursor_message)
}

const timeOf = (at: Date | string) => formatTimestamp(new Date(at))

function messageView(row: MessageRow): RailMessageView {
  const open = row.open === null ? null : Number(row.open)
  return {
    message_id: row.message_id,
    direction: row.direction,
    kind: row.kind,
    file_name: row.file_name,
    payment_type: row.payment_type,
    created_at: timeOf(row.created_at),
    settlement_date: row.settlement_date,
    written_at: row.written_at === null ? null : timeOf(row.written_at),
    sha256: row.sha256,
    transaction_count: row.transaction_count,
    control_sum: row.direction === 'out' ? centsText(row.control_sum) : null,
    answered: open === null ? null : row.transaction_count - open,
  }
}

type PaymentRow = Awaited<ReturnType<typeof paymentPage>>[number]

function paymentView(row: PaymentRow): RailPaymentView {
  return {
    tx_id: row.tx_id,
    position: row.position,
    source: row.source,
    amount: centsText(row.amount),
    status: row.status,
    reason_code: row.reason_code,
    answered_at: row.answered_at === null ? null : timeOf(row.answered_at),
    returned_reason_code: row.returned_reason_code,
  }
}

type RefusalRow = Awaited<ReturnType<typeof refusalPage>>[number]

function refusalView(row: RefusalRow): RailRefusalView {
  return { refusal_id: String(row.id), file_name: row.file_name,
    refused_at: timeOf(row.refused_at), reason: row.reason, sha256: row.sha256 }
}

type UnansweredRow = Awaited<ReturnType<typeof unansweredPage>>[number]

function unansweredView(row: UnansweredRow, now: Date): UnansweredPayoutView {
  const sentAt = new Date(row.created_at)
  return {
    tx_id: row.tx_id,
    partner_id: row.partner_id,
    account_id: row.account_id,
    account_number: row.debtor_account,
    source: row.source,
    payment_type: row.payment_type,
    amount: centsText(row.amount),
    recipient_name: row.creditor_name,
    message_id: row.message_id,
    file_name: row.file_name,
    sent_at: formatTimestamp(sentAt),
    age_seconds: Math.max(0, Math.floor((now.getTime() - sentAt.getTime()) / 1000)),
    status: row.status,
  }
}

function positionOf(row: MessageRow): MessagePosition {
  return { at: new Date(row.created_at), direction: row.direction, message_id: row.message_id }
}

// The messages list's cursor names a message by its time (milliseconds, 6 bytes), direction
// (one byte) and id (UTF-8), after the list's tag, base64url-encoded like every cursor of the
// bank (contract/cursor.ts): a message id is text, not a sequence or a UUID.

function encodeMessageCursor(position: MessagePosition): string {
  const head = Buffer.alloc(messages_tag.length + 7)
  head.write(messages_tag, 0)
  head.writeUIntBE(position.at.getTime(), messages_tag.length, 6)
  head.write(position.direction === 'out' ? 'o' : 'i', messages_tag.length + 6)
  return Buffer.concat([head, Buffer.from(position.message_id)]).toString('base64url')
}

function decodeMessageCursor(cursor: string): MessagePosition {
  const bytes = Buffer.from(cursor, 'base64url')
  const start = messages_tag.length + 7
  const direction = bytes.subarray(start - 1, start).toString()
  const id = bytes.subarray(start).toString()
  if (bytes.length <= start || bytes.subarray(0, messages_tag.length).toString() !== messages_tag
    || (direction !== 'o' && direction !== 'i') || !/^[^\u0000-\u001f\uFFFD]{1,35}$/u.test(id)) {
    throw invalidCursor()
  }
  return { at: new Date(bytes.readUIntBE(messages_tag.length, 6)),
    direction: direction === 'o' ? 'out' : 'in', message_id: id }
}

function decodePaymentCursor(cursor: string): number {
  const seq = decodeSeqCursor(payments_tag, cursor)
  if (seq === undefined || seq > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidCursor()
  return Number(seq)
}
