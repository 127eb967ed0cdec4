import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { errorTypes } from '../../src/contract/error-types.ts'
import { allOperations } from '../../src/contract/index.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8')
const readme = read('README.md')
// The README's reference text moved to the readers' docs: the guides for partners, the
// operators' pages and CONTRIBUTING.md. (Not docs/sdk-methods.md: it is generated from the
// endpoint table, so it names every subject whatever the prose says.)
const guideDirs = ['docs/guides', 'docs/operators']
const guides = guideDirs.flatMap((dir) =>
  fs.readdirSync(path.join(root, dir))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `${dir}/${name}`),
)
const prose = ['README.md', 'CONTRIBUTING.md', ...guides].map(read).join('\n')

test('docs - the README and the guides name every subject of the endpoint table', () => {
  const missing = allOperations()
    .map((op) => op.subject)
    .filter((subject) => !prose.includes(subject))
  assert.deepEqual(missing, [])
})

test('docs - the README is short and its "Where to go next" links every guide', () => {
  assert.ok(readme.split('\n').length <= 260, 'the README is at most about 250 lines')
  const start = readme.indexOf('\n## Where to go next\n')
  assert.ok(start >= 0, 'the README has a "Where to go next" section')
  const next = readme.slice(start)
  const wanted = [...guides, 'CONTRIBUTING.md', 'docs/operations.md', 'docs/sdk-methods.md']
  const missing = wanted.filter((file) => !next.includes(`](${file})`))
  assert.deepEqual(missing, [], `not linked from "Where to go next": ${missing.join(', ')}`)
})

test('docs - the README starts with the two commands: npm start and npm test', () => {
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
  assert.match(firstBlock, /^npm start\b/m)
  assert.match(firstBlock, /^npm test\b/m)
})

test('docs - the wire conventions list exactly the error types of the error table, with codes', () => {
  // "`type` is one of `a`, `b` (400), `c` (401), …": each code applies to the names before it.
  const wire = read('docs/guides/wire-conventions.md')
  const sentence = /`type` is one of ([\s\S]*?)\.\s/.exec(wire)?.[1]
  assert.ok(sentence, 'docs/guides/wire-conventions.md has no "`type` is one of" sentence')
  const listed: Record<string, number> = {}
  let pending: string[] = []
  for (const match of sentence.matchAll(/`([a-z_]+)`|\((\d{3})\)/g)) {
    if (match[1]) pending.push(match[1])
    else {
      for (const type of pending) listed[type] = Number(match[2])
      pending = []
    }
  }
  assert.deepEqual(pending, [], `types without a code: ${pending.join(', ')}`)
  const table =
    Object.fromEntries(Object.entries(errorTypes).map(([type, { code }]) => [type, code]))
  assert.deepEqual(listed, table)
})
