import type { Module } from '../module.ts'
import type { Notifier } from './notifier.ts'
import { SimulatedNotifier } from './simulated-notifier.ts'
import { SmtpNotifier } from './smtp-notifier.ts'
import type { NotifierTables } from './notify-tables.ts'
import { notifierSentMigration } from './notify-migration.ts'
import { notifier_limits } from './notifier.ts'

/** What the module builds: its members of the bank's Services. */
export interface NotifyServices {
  /** How the bank tells people things (payment advices, OTPs). */
  notifier: Notifier
  /** The simulated notifier, when it is the one (its messages are the sandbox's). */
  simulatedNotifier: SimulatedNotifier | undefined
}

// Notifiers: e-mail to entities and recipients (SMTP or simulated). The simulated notifier's
// table came with 0005_reference_client (transfers).
export const notifyModule: Module<NotifyServices, NotifierTables> = {
  name: 'notify',
  services: (_s, { db, clock, config }) => {
    // E-mail through SMTP when BANK_SMTP_URL is set; else the simulated notifier, which
    // records each message (the sandbox's `bank sandbox messages`) and sends nothing out.
    if (config.smtp)
      return { notifier: new SmtpNotifier(db, clock, config.smtp), simulatedNotifier: undefined }
    const simulatedNotifier = new SimulatedNotifier(db, clock)
    return { notifier: simulatedNotifier, simulatedNotifier }
  },
  migrations: {
    '0013_notifier_sent': notifierSentMigration,
  },
  limits: { ...notifier_limits },
}
