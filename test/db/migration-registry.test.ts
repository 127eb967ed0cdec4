import assert from 'node:assert/strict'
import { test } from 'node:test'
import { migrationsOf, type Module } from '../../src/module.ts'
import { migrations, modules } from '../../src/modules.ts'

// Each capability declares its own migrations (src/<folder>/<folder>-module.ts) and the
// registry is collected from the list of modules. A store records the names it has run, so
// a shipped migration must keep its name and its place whichever module holds it: moving a
// module, dropping one from the list or renaming a migration would make every existing
// store run it again or miss it. New migrations are added at the end of this list.
const shipped = [
  '0001_foundation',
  '0002_ledger',
  '0003_jobs_events',
  '0004_simulated_rail',
  '0005_reference_client',
  '0006_event_endpoints',
  '0007_bulk_payments',
  '0008_webhooks',
  '0009_sandbox',
  '0010_debit_orders',
  '0011_simulated_debit_rail',
  '0012_partner_debts',
  '0013_notifier_sent',
  '0014_debit_run_indexes',
  '0015_kyc_documents',
  '0016_refuse',
  '0017_events_pending',
  '0018_nats_identity',
  '0019_operator_audit',
  '0020_bulk_pin_budget',
  '0021_rate_limits',
  '0022_job_shares',
  '0023_webhook_job_shares',
  '0024_cards',
  '0025_card_decisions',
  '0026_audit_chains',
  '0029_card_versions',
  '0030_jobs_kind_updated',
  '0031_ledger_checkpoints',
  '0032_audit_checkpoints',
  '0033_transfer_keys_created',
  '0034_card_network_credentials',
  '0035_card_network_nats',
  '0036_rail_messages',
  '0037_incoming_payments',
  '0038_rail_statements',
  '0039_rail_ops_indexes',
  '0040_account_statements',
  '0041_account_status',
  '0042_legal_holds',
  '0043_approval_kinds',
  '0044_ledger_verify_result',
  '0045_sandbox_partner_clocks',
  '0046_job_clock_partner',
  '0047_unclaimed_funds',
  '0048_nats_limits',
  '0049_webhook_endpoint_health',
  '0050_approval_unclaimed',
  '0051_screening',
  '0052_screening_reviews',
  '0055_monitoring',
  '0056_approval_str_filing',
  '0057_monitoring_watermark',
  '0058_bulk_payment_tx_ids',
]

test('migration registry - the modules declare exactly the shipped migrations, in order', () => {
  assert.deepEqual(Object.keys(migrations), shipped)
})

test('migration registry - the order of the modules does not change the order of the migrations', () => {
  assert.deepEqual(Object.keys(migrationsOf([...modules].reverse())), shipped)
})

test('migration registry - a migration name declared by two modules is refused', () => {
  const up = async () => {}
  const first: Module = { name: 'first', migrations: { '0100_twice': { up } } }
  const second: Module = { name: 'second', migrations: { '0100_twice': { up } } }
  assert.throws(
    () => migrationsOf([first, second]),
    /migration 0100_twice is declared twice \(the second time by module second\)/,
  )
})

test('migration registry - each module is named after its folder, once', () => {
  const names = modules.map((module) => module.name)
  assert.equal(new Set(names).size, names.length)
  for (const name of names) assert.match(name, /^[a-z][a-z-]*$/)
})
