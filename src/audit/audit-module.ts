import type { Module } from '../module.ts'
import type { Caller } from '../auth/credential-store.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import {
  auditChainsMigration,
  auditCheckpointsMigration,
  operatorAuditMigration,
} from './audit-migration.ts'
import { audit_page_limit_default, audit_page_limit_max } from './audit-contract.ts'

/** Who a console sign-in or sign-out was made by; the audit row is the wrapper's (operator-audit.ts). */
const operatorOf = async (c: { caller: Caller }) => ({
  credential_id: c.caller.credentialId,
  name: c.caller.label,
})

// The operators' audit trail and dual control.
export const auditModule: Module = {
  name: 'audit',
  migrations: {
    '0019_operator_audit': operatorAuditMigration,
    '0026_audit_chains': auditChainsMigration,
    '0032_audit_checkpoints': auditCheckpointsMigration,
  },
  limits: { audit_page_limit_default, audit_page_limit_max },
  endpoints: (s) => [
    endpoint(contract.approvals.list, (r) => s.dualControl.list(r)),
    endpoint(contract.approvals.approve, (r, c) => s.dualControl.approve(c.caller, r.approval_id)),
    endpoint(contract.approvals.reject, (r, c) =>
      s.dualControl.reject(c.caller, r.approval_id, r.reason),
    ),
    endpoint(contract.audit.list, (r) => s.audit.list(r)),
    endpoint(contract.consoleSessions.signIn, (_r, c) => operatorOf(c)),
    endpoint(contract.consoleSessions.signOut, (_r, c) => operatorOf(c)),
  ],
}
