import type { Module } from '../module.ts'
import { notifierSentMigration } from './notify-migration.ts'
import { notifier_limits } from './notifier.ts'

// Notifiers: e-mail to entities and recipients (SMTP or simulated). The simulated notifier's
// table came with 0005_reference_client (transfers).
export const notifyModule: Module = {
  name: 'notify',
  migrations: {
    '0013_notifier_sent': notifierSentMigration,
  },
  limits: { ...notifier_limits },
}
