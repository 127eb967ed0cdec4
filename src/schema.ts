import type { AuditTables } from './audit/audit-tables.ts'
import type { AuthTables } from './auth/credential-tables.ts'
import type { BulkTables } from './bulk/bulk-tables.ts'
import type { CardTables } from './cards/card-tables.ts'
import type { DebitTables } from './debit/debit-tables.ts'
import type { EntityTables } from './entities/entity-tables.ts'
import type { EventTables } from './events/event-tables.ts'
import type { JobTables } from './jobs/job-tables.ts'
import type { KycTables } from './kyc/kyc-migration.ts'
import type { LedgerTables } from './ledger/ledger-tables.ts'
import type { RateLimitTables } from './limits/limits-tables.ts'
import type { NatsIdentityTables } from './nats-identity/nats-identity-tables.ts'
import type { NotifierTables } from './notify/notify-tables.ts'
import type { PartnerTables } from './partners/partner-tables.ts'
import type { RailTables } from './rails/rail-tables.ts'
import type { SandboxTables } from './sandbox/sandbox-tables.ts'
import type { TransferTables } from './transfers/transfer-tables.ts'
import type { UserTables } from './users/user-tables.ts'
import type { WebhookTables } from './webhooks/webhook-tables.ts'

// The one `Database` interface that types every query: each capability declares its own
// tables beside its code (<folder>-tables.ts) and they meet here. Capabilities type their
// queries with it; db/ (the toolkit) never sees it, and the ledger types its own with
// LedgerTables alone (a Kysely<Database> is a Kysely<LedgerTables>).
export interface Database
  extends AuditTables,
    AuthTables,
    BulkTables,
    CardTables,
    DebitTables,
    EntityTables,
    EventTables,
    JobTables,
    KycTables,
    LedgerTables,
    RateLimitTables,
    NatsIdentityTables,
    NotifierTables,
    PartnerTables,
    RailTables,
    SandboxTables,
    TransferTables,
    UserTables,
    WebhookTables {}
