import type { Module } from '../module.ts'
import { operatorAuditMigration } from './audit-migration.ts'
import { audit_page_limit_default, audit_page_limit_max } from './audit-contract.ts'

// The operators' audit trail and dual control.
export const auditModule: Module = {
  name: 'audit',
  migrations: {
    '0019_operator_audit': operatorAuditMigration,
  },
  limits: { audit_page_limit_default, audit_page_limit_max },
}
