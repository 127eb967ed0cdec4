import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { SecretBox } from '../../src/secrets/secret-box.ts'

// Without BANK_OTP_KEY, bulk payments' PIN key is derived from the bank's secrets key, so
// that every instance sharing that key (BANK_SECRETS_KEY, or one data directory's
// secrets-key file) verifies a PIN another instance issued.

test('otp key - instances sharing the bank key derive the same PIN key; other uses and other keys differ', () => {
  const key = randomBytes(32)
  const one = new SecretBox({ key, dataDir: '/nonexistent' }).derivedKey('bulk-otp')
  const two = new SecretBox({ key, dataDir: '/nonexistent' }).derivedKey('bulk-otp')
  assert.equal(one.length, 32)
  assert.deepEqual(one, two)
  assert.notDeepEqual(new SecretBox({ key, dataDir: '/nonexistent' }).derivedKey('other-use'), one)
  assert.notDeepEqual(new SecretBox({ key: randomBytes(32), dataDir: '/nonexistent' }).derivedKey(
    'bulk-otp'), one)
  assert.notDeepEqual(one, key, 'the derived key is not the bank key itself')
})

test('otp key - without a configured key, instances on one data directory derive the same PIN key', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-otp-key-'))
  try {
    const first = new SecretBox({ dataDir }).derivedKey('bulk-otp')
    const second = new SecretBox({ dataDir }).derivedKey('bulk-otp')
    assert.deepEqual(first, second)
    assert.ok(fs.existsSync(path.join(dataDir, 'secrets-key')))
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
})
