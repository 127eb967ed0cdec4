import assert from 'node:assert/strict'
import fs from 'node:fs'
import { test } from 'node:test'
import { renderSdkMethods, sdkMethodsPath } from '../../scripts/sdk-methods.ts'
import { commands } from '../../src/cli/commands.ts'
import { contractEntries } from '../../src/contract/index.ts'

// docs/sdk-methods.md is generated from the endpoint table; these tests keep the
// checked-in copy equal to what the table says today. No NATS, no database.

test('sdk-methods - the checked-in docs/sdk-methods.md equals a fresh render (run `npm run asyncapi`)', () => {
  assert.equal(fs.readFileSync(sdkMethodsPath, 'utf8'), renderSdkMethods())
})

test('sdk-methods - every subject has one row, naming its SDK method, and an ops subject its CLI command', () => {
  const rows = renderSdkMethods()
    .split('\n')
    .filter((line) => line.startsWith('| `'))
  const entries = contractEntries()
  assert.equal(rows.length, entries.length)
  for (const entry of entries) {
    const row = rows.find((line) => line.startsWith(`| \`${entry.operation.subject}\` |`))
    assert.ok(row, `no row for ${entry.operation.subject}`)
    assert.ok(row.includes(`\`client.${entry.sdkGroup}.${entry.sdkMethod}\``),
      `${entry.operation.subject}: method missing`)
    if (entry.client === 'operator') {
      const command = commands.find((c) => c.operation === entry.operation)
      assert.ok(command, `no CLI command for ${entry.operation.subject}`)
      assert.ok(row.includes(`\`bank ${command.words}\``),
        `${entry.operation.subject}: CLI command missing`)
    } else {
      assert.ok(row.includes(`\`${entry.operation.permission}\``),
        `${entry.operation.subject}: permission missing`)
    }
  }
})
