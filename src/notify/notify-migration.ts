import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The keys the SMTP notifier has sent, so a key is sent once (the simulated notifier keeps
// whole messages in notifier_messages instead). No message text is kept: it may carry a
// one-time PIN.
export const notifierSentMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table notifier_sent (
        key text primary key,
        recipient text not null,
        subject text not null,
        sent_at timestamptz not null
      )`)
  },
}
