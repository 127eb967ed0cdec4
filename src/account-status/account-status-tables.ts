import type { Cents, GeneratedCents, Timestamp } from '../db/column-types.ts'
import type { AccountStatus } from '../ledger/journal.ts'

// Kysely types of the account-status capability's table: every change of an account's
// status, with who made it and why (its history). The status itself is the ledger's column
// of `accounts` (written under the account's lock: src/ledger/account-status.ts).

export interface AccountStatusChangesTable {
  id: string
  /** The order of the changes (of one account: its history). */
  seq: GeneratedCents
  account_id: string
  partner_id: string
  from_status: AccountStatus
  to_status: AccountStatus
  reason: string
  /** Who asked: the account's partner, an operator of the bank, or the bank itself (a job). */
  changed_by: 'partner' | 'operator' | 'system'
  changed_at: Timestamp
  /**
   * The account's last transaction sequence when it changed: every transaction after it was
   * written under the new status.
   */
  account_seq: Cents
}

export interface AccountStatusTables {
  account_status_changes: AccountStatusChangesTable
}
