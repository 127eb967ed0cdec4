import type { Module } from '../module.ts'
import { operatorAuditMigration } from './audit-migration.ts'

// The operators' audit trail and dual control.
export const auditModule: Module = {
  name: 'audit',
  migrations: {
    '0019_operator_audit': operatorAuditMigration,
  },
}
