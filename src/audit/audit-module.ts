import type { Module } from '../module.ts'
import { OperatorAudit } from './operator-audit.ts'
import { DualControl } from './dual-control.ts'
import type { AuditTables } from './audit-tables.ts'
import type { Caller } from '../auth/credential-store.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import {
  auditChainsMigration,
  auditCheckpointsMigration,
  approvalKindsMigration,
  approvalStrFilingMigration,
  approvalUnclaimedMigration,
  operatorAuditMigration,
} from './audit-migration.ts'
import { audit_page_limit_default, audit_page_limit_max } from './audit-contract.ts'

/** Who a console sign-in or sign-out was made by; the audit row is the wrapper's (operator-audit.ts). */
const operatorOf = async (c: { caller: Caller }) => ({
  credential_id: c.caller.credentialId,
  name: c.caller.label,
})
/** What the module builds: its members of the bank's Services. */
export interface AuditServices {
  /**
   * Every operator action in the audit trail (the endpoint wrapper runs audited operations
   * through it).
   */
  audit: OperatorAudit
  /** Deposits and reversals, and the second operator's approval above the threshold. */
  dualControl: DualControl
}

// The operators' audit trail and dual control.
export const auditModule: Module<AuditServices, AuditTables> = {
  name: 'audit',
  needs: ['ledger'],
  services: (s, { db, clock, config, log }) => ({
    audit: new OperatorAudit(db, clock, log),
    dualControl: new DualControl(db, clock, s.ledger, config.dualControlCents),
  }),
  migrations: {
    '0019_operator_audit': operatorAuditMigration,
    '0026_audit_chains': auditChainsMigration,
    '0032_audit_checkpoints': auditCheckpointsMigration,
    '0043_approval_kinds': approvalKindsMigration,
    '0050_approval_unclaimed': approvalUnclaimedMigration,
    '0056_approval_str_filing': approvalStrFilingMigration,
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
