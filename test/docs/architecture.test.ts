import assert from 'node:assert/strict'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
// @ts-expect-error scripts/arch.mjs is plain JavaScript without declarations.
import { checkArchitecture, describeViolation, formatReport } from '../../scripts/arch.mjs'

// The project's own rules (.dependency-cruiser.mjs), run on a small tree that breaks each of
// them once on purpose (test/fixtures/architecture, read as if it were the project root).
// `npm test` runs the same check on src/ with today's known violations (scripts/arch.mjs).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const fixture = path.join(root, 'test/fixtures/architecture')

type Violation = { rule: { name: string }; from: string; to: string; cycle?: { name: string }[] }
type Result = { newViolations: Violation[]; knownViolations: Violation[]; known: Record<string,
  number>; fixed: Violation[] }
const check = (knownViolations: unknown[]): Promise<Result> => checkArchitecture(
  { root, baseDir: fixture, knownViolations })

test('architecture - each rule reports its breach in the fixture, and only that', async () => {
  const result = await check([])
  assert.deepEqual(result.newViolations.map(describeViolation).sort(), [
    'contract-imports-no-server-code: src/users/user-contract.ts → src/users/user-service.ts',
    'db-and-ledger-import-no-schema: src/ledger/ledger-tables.ts → src/schema.ts',
    'db-imports-no-capability: src/db/schema.ts → src/users/user-tables.ts',
    'ledger-imports-nothing-above-db: src/ledger/ledger.ts → src/audit/audit.ts',
    'money-through-the-ledger-writer: src/users/user-service.ts → src/ledger/ledger-batch.ts',
    // A cycle through a type-only import is still a cycle; it is reported once.
    'no-circular: src/db/schema.ts → src/users/user-tables.ts → src/db/schema.ts',
    'sdk-imports-no-server-code: src/client/sdk.ts → src/transport/nats.ts',
    'shared-nats-imports-only-packages: src/nats/connect.ts → src/transport/nats.ts',
    'src-imports-no-tests: src/ledger/ledger.ts → test/amounts.ts',
  ])
})

test('architecture - a known violation passes, a new cycle fails and is named with its rule and files', async () => {
  const everything = (await check([])).newViolations
  const known = everything.filter((v) => v.rule.name !== 'no-circular')
  const result = await check(known)
  assert.deepEqual(result.known, {
    'contract-imports-no-server-code': 1,
    'db-and-ledger-import-no-schema': 1,
    'db-imports-no-capability': 1,
    'ledger-imports-nothing-above-db': 1,
    'money-through-the-ledger-writer': 1,
    'sdk-imports-no-server-code': 1,
    'shared-nats-imports-only-packages': 1,
    'src-imports-no-tests': 1,
  })
  assert.deepEqual([...new Set(result.newViolations.map((v) => v.rule.name))], ['no-circular'])
  const report = formatReport(result)
  assert.match(report, /^architecture: 1 new violation\(s\) of the rules in \.dependency-cruiser\.mjs:$/m)
  assert.match(report, /^ {2}no-circular: src\/db\/schema\.ts → src\/users\/user-tables\.ts → src\/db\/schema\.ts$/m)
  assert.match(report, /^architecture: 1 new, 8 known violations remain \(.*db-imports-no-capability 1.*\)/m)
})

test('architecture - a known violation that no longer occurs is reported as fixed, and fails nothing', async () => {
  const stale = { type: 'dependency', from: 'src/db/gone.ts', to: 'src/users/gone.ts',
    rule: { severity: 'error', name: 'db-imports-no-capability' } }
  const result = await check([...(await check([])).newViolations, stale])
  assert.deepEqual(result.newViolations, [])
  assert.deepEqual(result.fixed.map((v) => `${v.from} → ${v.to}`),
    ['src/db/gone.ts → src/users/gone.ts'])
  assert.match(formatReport(result), /^ {2}fixed: db-imports-no-capability: src\/db\/gone\.ts → src\/users\/gone\.ts$/m)
})
