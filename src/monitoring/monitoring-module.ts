import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { MonitoringCases } from './monitoring-cases.ts'
import { monitoringGauges } from './monitoring-metrics.ts'
import { monitoringMigration } from './monitoring-migration.ts'
import { monitoringWatermarkMigration } from './monitoring-watermark-migration.ts'
import { MonitoringReports } from './monitoring-reports.ts'
import { monitoring_sweep_job_kind, MonitoringSweep } from './monitoring-sweep.ts'
import type { MonitoringTables } from './monitoring-tables.ts'
import { monitoring_sweep_limits } from './monitoring-limits.ts'

/** What the module builds: its members of the bank's Services. */
export interface MonitoringServices {
  /** The sweep that evaluates each money movement against the rules, off the payment path. */
  monitoringSweep: MonitoringSweep
  /** Rules, alerts and cases as operators work them. */
  monitoringCases: MonitoringCases
  /** Suspicious-transaction reports: asked, approved by a second operator, filed (goAML). */
  monitoringReports: MonitoringReports
}

const why = 'a read model: the monitoring sweep reads the ledger behind it by the ledger\'s own ' +
  'indexes (postings by id, Pending payouts, an account\'s rows by seq), never in its writes'

// Transaction monitoring (RULINGS "Financial crime controls"): rules evaluated after money
// moves, off the payment path; alerts grouped into one open case per customer; decisions;
// reports to the FIC in goAML XML with a second operator to file them.
export const monitoringModule: Module<MonitoringServices, MonitoringTables> = {
  name: 'monitoring',
  needs: ['jobs', 'audit'],
  reads: {
    transactions: why,
    postings: why,
    accounts: 'the owner (entity) of a moved account, its number, balance and status for a ' +
      'report, and the customer\'s accounts for a case\'s recent money',
    entities: 'the customer\'s name and particulars a case shows and a report names',
    users: 'the people of a customer a report names as its accounts\' signatories',
    credentials: 'an assignee must be an operator\'s credential',
    approvals: 'whether a report of a case still waits for its second operator',
  },
  services: (s, { db, clock, config }) => {
    const monitoringCases = new MonitoringCases(db, clock)
    monitoringGauges(s.metrics, db, clock)
    return {
      monitoringSweep: new MonitoringSweep(db, clock, s.jobRunner),
      monitoringCases,
      monitoringReports: new MonitoringReports(db, clock, monitoringCases, s.dualControl,
        config.goaml, { name: config.serviceName, branchCode: config.rail.branchCode }),
    }
  },
  migrations: { '0055_monitoring': monitoringMigration,
    '0057_monitoring_watermark': monitoringWatermarkMigration },
  limits: { monitoring_sweep: { ...monitoring_sweep_limits } },
  jobKinds: [monitoring_sweep_job_kind],
  endpoints: (s) => {
    const ops = contract.monitoring
    return [
      endpoint(ops.monitoringRules, () => s.monitoringCases.rules()),
      endpoint(ops.monitoringRuleSet, (r, c) => s.monitoringCases.setRule(c.caller, r)),
      endpoint(ops.monitoringRun, () => s.monitoringSweep.run()),
      endpoint(ops.monitoringAlerts, (r) => s.monitoringCases.alerts(r)),
      endpoint(ops.monitoringCases, (r) => s.monitoringCases.cases(r)),
      endpoint(ops.monitoringCase, (r) => s.monitoringCases.detail(r.case_id)),
      endpoint(ops.monitoringCaseAssign, (r) => s.monitoringCases.assign(r.case_id, r.assignee)),
      endpoint(ops.monitoringCaseNote, (r, c) => s.monitoringCases.note(c.caller, r.case_id, r.text)),
      endpoint(ops.monitoringCaseDecide, async (r, c) => r.decision === 'report'
        ? s.monitoringReports.request(c.caller, r.case_id, r.reason)
        : { case: await s.monitoringCases.decide(c.caller, r.case_id, r.decision, r.reason),
          approval_id: null }),
      endpoint(ops.monitoringReports, (r) => s.monitoringReports.list(r)),
      endpoint(ops.monitoringReport, (r) => s.monitoringReports.get(r.report_id)),
    ]
  },
}
