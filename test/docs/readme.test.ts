import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
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
