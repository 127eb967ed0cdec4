import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import { assert } from '../errors.ts'
import { notifier_limits, type Notifier, type NotifierMessage } from './notifier.ts'

// The notifier of the sandbox and the tests: it sends nothing out and records each message
// in `notifier_messages`, shared by every instance, so that operators (and tests) can read
// what a person would have received. Like a real sender it sends a key once: a second
// send under the same key is a no-op (the key is unique in the table).

export interface SentMessage {
  id: string
  key: string
  to: string
  subject: string
  text: string
  created_at: Date
}

export const messages_page_max = 1000

export class SimulatedNotifier implements Notifier {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async send(message: NotifierMessage): Promise<void> {
    // Callers build these texts; an oversized one is a programmer's mistake, not input.
    assert(message.key.length > 0 && message.key.length <= notifier_limits.key_length_max,
      'a notifier key is 1-200 characters')
    assert(message.subject.length <= notifier_limits.subject_length_max,
      'a notifier subject is at most 200 characters')
    assert(message.text.length <= notifier_limits.text_length_max,
      'a notifier text is at most 10000 characters')
    await this.db
      .insertInto('notifier_messages')
      .values({
        id: randomUUID(),
        key: message.key,
        recipient: message.to,
        subject: message.subject,
        body: message.text,
        created_at: this.clock.now(),
      })
      .onConflict((conflict) => conflict.column('key').doNothing())
      .execute()
  }

  /** The newest messages first, at most `limit` (1 to 1000); `to` narrows to one recipient. */
  async list(options: { limit: number; to?: string }): Promise<SentMessage[]> {
    assert(Number.isInteger(options.limit) && options.limit >= 1
      && options.limit <= messages_page_max, 'a page is 1-1000 messages')
    let query = this.db.selectFrom('notifier_messages').selectAll()
    if (options.to !== undefined) query = query.where('recipient', '=', options.to)
    const rows = await query.orderBy('created_seq', 'desc').limit(options.limit).execute()
    return rows.map((row) => ({ id: row.id, key: row.key, to: row.recipient, subject: row.subject,
      text: row.body, created_at: row.created_at }))
  }
}
