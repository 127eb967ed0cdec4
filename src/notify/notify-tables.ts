import type { Generated } from 'kysely'
import type { Timestamp } from '../db/column-types.ts'

// Kysely types of the notifiers' tables (src/schema.ts's Database extends NotifierTables): the
// simulated notifier's record of the messages it sent (simulated-notifier.ts), the SMTP
// notifier's of the keys it sent (smtp-notifier.ts).

export interface NotifierMessagesTable {
  id: string
  created_seq: Generated<string>
  key: string
  recipient: string
  subject: string
  body: string
  created_at: Timestamp
}

export interface NotifierSentTable {
  key: string
  recipient: string
  subject: string
  sent_at: Date
}

export interface NotifierTables {
  notifier_messages: NotifierMessagesTable
  notifier_sent: NotifierSentTable
}
