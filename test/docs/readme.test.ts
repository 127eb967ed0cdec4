import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { errorTypes } from '../../src/contract/error-types.ts'
import { allOperations } from '../../src/contract/index.ts'

const readme = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md'), 'utf8')

test('docs - the README names every subject of the endpoint table', () => {
  const missing = allOperations()
    .map((op) => op.subject)
    .filter((subject) => !readme.includes(subject))
  assert.deepEqual(missing, [])
})

test('docs - the README starts with the two commands: npm start and npm test', () => {
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
  assert.match(firstBlock, /^npm start\b/m)
  assert.match(firstBlock, /^npm test\b/m)
})

test('docs - the README lists exactly the error types of the error table, each with its code', () => {
  // "`type` is one of `a`, `b` (400), `c` (401), …": each code applies to the names before it.
  const sentence = /`type` is one of ([\s\S]*?)\.\s/.exec(readme)?.[1]
  assert.ok(sentence, 'the README has no "`type` is one of" sentence')
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
  const table = Object.fromEntries(Object.entries(errorTypes).map(([type, { code }]) => [type, code]))
  assert.deepEqual(listed, table)
})
