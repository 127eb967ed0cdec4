import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { saveOperatorToken } from '../../src/app.ts'
import { createLogger } from '../../src/logger.ts'

// A data directory started once on PGlite and once on PostgreSQL holds two stores, each with
// its own first operator credential. The first token file is never overwritten: the second
// store's token goes beside it, so neither store locks its operator out.

const log = createLogger('silent')

test('operator token - the first store writes operator-token, mode 0600', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-token-'))
  const file = saveOperatorToken(dir, 'first-token', 'store-a', log)
  assert.equal(file, path.join(dir, 'operator-token'))
  assert.equal(fs.readFileSync(file, 'utf8'), 'first-token\n')
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)
})

test('operator token - an existing operator-token is never overwritten; a second store writes its own beside it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-token-'))
  saveOperatorToken(dir, 'pglite-token', 'store-a', log)
  const second = saveOperatorToken(dir, 'postgres-token', 'store-b', log)
  assert.equal(fs.readFileSync(path.join(dir, 'operator-token'), 'utf8'), 'pglite-token\n',
    'the first store keeps its token')
  assert.equal(second, path.join(dir, 'operator-token-store-b'))
  assert.equal(fs.readFileSync(second, 'utf8'), 'postgres-token\n')
  assert.equal(fs.statSync(second).mode & 0o777, 0o600)
})
