import type { Migrations } from './db/migrations.ts'
import { migrationsOf, type Module } from './module.ts'
import { accountsModule } from './accounts/accounts-module.ts'
import { auditModule } from './audit/audit-module.ts'
import { authModule } from './auth/auth-module.ts'
import { bulkModule } from './bulk/bulk-module.ts'
import { cardsModule } from './cards/cards-module.ts'
import { debitModule } from './debit/debit-module.ts'
import { entitiesModule } from './entities/entities-module.ts'
import { eventsModule } from './events/events-module.ts'
import { incomingModule } from './incoming/incoming-module.ts'
import { jobsModule } from './jobs/jobs-module.ts'
import { kycModule } from './kyc/kyc-module.ts'
import { ledgerModule } from './ledger/ledger-module.ts'
import { limitsModule } from './limits/limits-module.ts'
import { moneyModule } from './money/money-module.ts'
import { monitoringModule } from './monitoring/monitoring-module.ts'
import { natsIdentityModule } from './nats-identity/nats-identity-module.ts'
import { notifyModule } from './notify/notify-module.ts'
import { partnersModule } from './partners/partners-module.ts'
import { railsModule } from './rails/rails-module.ts'
import { accountStatusModule } from './account-status/account-status-module.ts'
import { reconciliationModule } from './reconciliation/reconciliation-module.ts'
import { sandboxModule } from './sandbox/sandbox-module.ts'
import { screeningModule } from './screening/screening-module.ts'
import { statementsModule } from './statements/statements-module.ts'
import { summaryModule } from './summary/summary-module.ts'
import { transfersModule } from './transfers/transfers-module.ts'
import { usersModule } from './users/users-module.ts'
import { webhooksModule } from './webhooks/webhooks-module.ts'

// Every capability of the bank, one line each (its declaration is src/<folder>/<folder>-module.ts).
// The composition root derives the bank from this list: its Database type (schema.ts), its
// Services (services.ts, built in the order of the modules' needs), its migrations (run in
// the order of their names), endpoints, job kinds and subscriptions. The order of the list is
// not significant.
export const modules = [
  accountsModule,
  accountStatusModule,
  auditModule,
  authModule,
  bulkModule,
  cardsModule,
  debitModule,
  entitiesModule,
  eventsModule,
  incomingModule,
  jobsModule,
  kycModule,
  ledgerModule,
  limitsModule,
  moneyModule,
  monitoringModule,
  natsIdentityModule,
  notifyModule,
  partnersModule,
  railsModule,
  reconciliationModule,
  sandboxModule,
  screeningModule,
  statementsModule,
  summaryModule,
  transfersModule,
  usersModule,
  webhooksModule,
] as const satisfies readonly Module[]

/** Every capability's migrations: what openDatabase brings a store to. */
export const migrations: Migrations = migrationsOf(modules)
