import assert from 'node:assert/strict'
import fs from 'node:fs'
import { test } from 'node:test'
import {
  partnerEntries, partnerMethodsPath, renderPartnerMethods,
} from '../../scripts/gen-sdk-types.ts'
import { partnerMethodNames } from '../../scripts/sdk-method-table.ts'
import { errorTypes } from '../../src/contract/error-types.ts'

// The SDK's generated declarations (src/client/generated/partner-methods.ts, issue 44): the
// checked-in file is what `npm run sdk:types` writes from the contract today, and each partner
// method is declared once with its TSDoc (summary, errors, example). That each declaration is
// the contract's own method type is checked by the compiler (src/client/method-groups.ts,
// PartnerMethodsCheck). No NATS, no database.

const rendered = renderPartnerMethods()

test('sdk-types - the checked-in partner-methods.ts equals a fresh render (run `npm run sdk:types`)', () => {
  assert.equal(fs.readFileSync(partnerMethodsPath, 'utf8'), rendered)
})

test('sdk-types - the table names every partner method once and no other', () => {
  const methods = partnerEntries().map((entry) => `${entry.sdkGroup}.${entry.sdkMethod}`)
  assert.deepEqual(Object.keys(partnerMethodNames).sort(), [...methods].sort())
})

/** The TSDoc block right above a method's declaration in the generated file. */
function docOf(group: string, method: string): string {
  const body = rendered.slice(rendered.indexOf(`export interface Partner${group.charAt(0)
    .toUpperCase()}${group.slice(1)}Methods {`))
  const at = body.search(new RegExp(`\\n  ${method}\\(`))
  assert.ok(at > 0, `${group}.${method} is not declared`)
  const start = body.lastIndexOf('  /**', at)
  return body.slice(start, at)
}

test('sdk-types - every method carries its summary, each of its error types and an example', () => {
  for (const entry of partnerEntries()) {
    const doc = docOf(entry.sdkGroup, entry.sdkMethod).replace(/\n\s*\* ?/g, ' ')
    const path = `${entry.sdkGroup}.${entry.sdkMethod}`
    const summary = entry.operation.summary.replace(/\s+/g, ' ')
    assert.ok(doc.includes(summary), `${path}: summary missing`)
    for (const type of partnerMethodNames[path]!.errors) {
      assert.ok(doc.includes(`@throws {BankApiError} \`${type}\``), `${path}: ${type}`)
    }
    assert.match(doc, new RegExp(`@example \`\`\`ts const reply: \\w+ = await bank\\.${path}\\(`),
      `${path}: example`)
  }
})

test('sdk-types - the names a partner looks for are exported types', () => {
  for (const name of ['Transaction', 'Account', 'Entity', 'User', 'BulkPayment', 'Card',
    'TransferRequest', 'TransferResult', 'Mandate', 'DebitOrder']) {
    assert.match(rendered, new RegExp(`^export type ${name} = `, 'm'), name)
  }
})

test('sdk-types - the package README names every error type', () => {
  const readmeFile = new URL('../../packages/client/README.md', import.meta.url)
  const readme = fs.readFileSync(readmeFile, 'utf8')
  const missing = Object.keys(errorTypes).filter((type) => !readme.includes(`\`${type}\``))
  assert.deepEqual(missing, [])
})
