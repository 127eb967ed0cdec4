import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import {
  anchorOf, generatedLine, referenceDir, renderReference,
} from '../../scripts/reference.ts'
import { settingNames } from '../../src/config.ts'
import { errorTypes } from '../../src/contract/error-types.ts'
import { contractEntries } from '../../src/contract/index.ts'
import { eventTypes } from '../../src/events/event-types.ts'
import { modules } from '../../src/modules.ts'

// docs/reference/ is generated from the code's tables (scripts/reference.ts); these tests
// keep the checked-in pages equal to what the tables say today. No NATS, no database.

const rerun = 'run `npm run docs:reference`'
const pages = renderReference()

/** Where two texts first differ, for the message of a stale page. */
function firstDifference(actual: string, expected: string): string {
  const a = actual.split('\n')
  const e = expected.split('\n')
  const line = a.findIndex((text, index) => text !== e[index])
  const at = line === -1 ? Math.min(a.length, e.length) : line
  const shown = (text: string | undefined) => JSON.stringify(text ?? '(end)')
  return `line ${at + 1}: on disk ${shown(a[at])}, generated ${shown(e[at])}`
}

/** The rows of a page's tables whose first cell is code: one per listed thing. */
function codeRows(text: string): string[] {
  return text.split('\n').filter((line) => line.startsWith('| `') || line.startsWith('| [`'))
}

test('reference - every page of docs/reference/ equals a fresh render (run `npm run docs:reference`)', () => {
  for (const [name, text] of Object.entries(pages)) {
    const file = path.join(referenceDir, name)
    assert.ok(fs.existsSync(file), `docs/reference/${name} is missing: ${rerun}`)
    const onDisk = fs.readFileSync(file, 'utf8')
    if (onDisk !== text) {
      const where = firstDifference(onDisk, text)
      assert.fail(`docs/reference/${name} is not current (${where}): ${rerun}`)
    }
  }
})

test('reference - docs/reference/ holds only generated pages', () => {
  const extra = fs.readdirSync(referenceDir).filter((name) => !(name in pages))
  assert.deepEqual(extra, [], `pages the generator no longer writes: remove them, then ${rerun}`)
})

test('reference - each page says it is generated and is not edited by hand', () => {
  for (const [name, text] of Object.entries(pages)) {
    assert.equal(text.split('\n')[0], generatedLine, name)
    assert.match(generatedLine, /npm run docs:reference/)
    assert.match(generatedLine, /Do not edit by hand/)
  }
})

test('reference - the pages are sorted and carry no dates, so a render is the same every time', () => {
  assert.deepEqual(renderReference(), pages)
  for (const [name, text] of Object.entries(pages)) {
    assert.doesNotMatch(text, /\b20\d\d-\d\d-\d\dT/, `${name} carries a timestamp`)
  }
})

test('reference - subjects: one section and one index row per operation of the endpoint table', () => {
  const text = pages['subjects.md']!
  const headings = text.split('\n').filter((line) => line.startsWith('### '))
  const entries = contractEntries()
  assert.equal(headings.length, entries.length)
  for (const { operation } of entries) {
    const heading = `\`${operation.subject}\``
    assert.ok(headings.includes(`### ${heading}`), `no section for ${operation.subject}`)
    assert.ok(text.includes(`](#${anchorOf(heading)})`), `no index row for ${operation.subject}`)
  }
  const index = text.slice(0, text.indexOf('## Requests and replies'))
  assert.equal(codeRows(index).length, entries.length)
})

test('reference - settings, errors, events and job kinds: one row each', () => {
  const rowsOf = (name: string) => codeRows(pages[name]!).map((line) => line.split('`')[1])
  assert.deepEqual(rowsOf('settings.md'), [...settingNames].sort())
  assert.deepEqual(rowsOf('errors.md').sort(), Object.keys(errorTypes).sort())
  assert.deepEqual(rowsOf('events.md').sort(), [...eventTypes].sort())
  const kinds = modules.flatMap((m) => m.jobKinds ?? [])
  assert.deepEqual(rowsOf('job-kinds.md'), [...kinds].sort())
})

test('reference - the pages stand on their own: no document outside this repository is named', () => {
  for (const [name, text] of Object.entries(pages)) {
    assert.doesNotMatch(text, /RULINGS|interface\.md|DESIGN\.md|\.\.\/shared|\.\.\/\.\.\//, name)
  }
})
