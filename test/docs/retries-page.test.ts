import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { retryPolicyOf, type RetryPolicy } from '../../src/client/retry.ts'
import { contractEntries } from '../../src/contract/index.ts'

// docs/guides/retries-and-idempotency.md has one table row per partner operation, saying
// whether a repeat is safe and what the SDK's `retry` option does with it. The rows are held
// to the contract here: none missing (a new operation needs its row), none left over, each
// naming its SDK method, and the "SDK `retry`" column saying what src/client/retry.ts does.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const page = 'docs/guides/retries-and-idempotency.md'

interface Row { subject: string; method: string; safeBy: string; sdkRetry: string }

function rowsOf(text: string): Row[] {
  return text.split('\n').filter((line) => line.startsWith('| `svc.')).map((line) => {
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim())
    assert.equal(cells.length, 6, `a row of six cells: ${line}`)
    const code = (cell: string) => /^`([^`]+)`$/.exec(cell)?.[1] ?? cell
    return { subject: code(cells[0]!), method: code(cells[1]!), safeBy: cells[2]!,
      sdkRetry: cells[5]! }
  })
}

/** What the "SDK `retry`" column says for a policy. */
function said(policy: RetryPolicy): string {
  if (policy.kind === 'read') return 'yes (read)'
  if (policy.kind === 'none') return 'no'
  return policy.recover ? 'yes (key): the original' : 'yes (key): `duplicate` thrown'
}

const partnerEntries = contractEntries().filter((entry) => entry.client === 'partner')
const rows = rowsOf(fs.readFileSync(path.join(root, page), 'utf8'))

test('docs - the retries page has one row for every partner operation, and no other', () => {
  const subjects = rows.map((row) => row.subject)
  assert.equal(new Set(subjects).size, subjects.length, 'a subject with two rows')
  const wanted = partnerEntries.map((entry) => entry.operation.subject)
  const missing = wanted.filter((subject) => !subjects.includes(subject))
  assert.deepEqual(missing, [], `${page} has no row for: ${missing.join(', ')}`)
  const extra = subjects.filter((subject) => !wanted.includes(subject))
  assert.deepEqual(extra, [], `${page} has rows for no partner operation: ${extra.join(', ')}`)
})

test('docs - each row of the retries page names its SDK method and says what the SDK retry does', () => {
  for (const entry of partnerEntries) {
    const row = rows.find((r) => r.subject === entry.operation.subject)
    if (!row) continue // the test above names it
    assert.equal(row.method, `${entry.sdkGroup}.${entry.sdkMethod}`, row.subject)
    const policy = retryPolicyOf(entry.operation)
    assert.equal(row.sdkRetry, said(policy), `${row.subject}: the SDK retry column`)
    if (policy.kind === 'keyed') {
      assert.ok(row.safeBy.startsWith(`key: \`${policy.key}\``),
        `${row.subject}: safe by its key ${policy.key}, says "${row.safeBy}"`)
    } else {
      assert.ok(!row.safeBy.startsWith('key:'), `${row.subject}: the SDK knows no key for it`)
    }
    if (policy.kind === 'read') assert.match(row.safeBy, /^nature \(a read/, row.subject)
  }
})
