import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KnownAccounts } from '../../src/ledger/known-accounts.ts'
import type { AccountState } from '../../src/ledger/ledger-batch.ts'

// What reserve batches remember of their accounts (known-accounts.ts), on its own: copies in
// and out, all-or-nothing takes, the bound on its size, and the pause after a stale guess.

const options = { entries_max: 10, stale_pause_ms: 1000, window_guesses: 100, stale_max: 5,
  suspend_ms: 60_000 }

function state(id: string, balance = 100n): AccountState {
  return { id, partner_id: 'p', status: 'active', balance, held: 0n, last_seq: 1n,
    last_sha: 'a'.repeat(64), last_posted: 1n }
}

test('known accounts - take gives copies of every account asked for, or nothing when one is missing', () => {
  const known = new KnownAccounts({ ...options, entries_max: 10 })
  known.remember([state('a'), state('b')])
  const taken = known.take(['a', 'b'])!
  assert.equal(taken.size, 2)
  taken.get('a')!.balance = 5n
  assert.equal(known.take(['a'])!.get('a')!.balance, 100n,
    'changing a taken state does not change the memory')
  assert.equal(known.take(['a', 'c']), undefined)
})

test('known accounts - remember copies, so a batch changing its states later does not change the memory', () => {
  const known = new KnownAccounts({ ...options, entries_max: 10 })
  const s = state('a')
  known.remember([s])
  s.balance = 1n
  assert.equal(known.take(['a'])!.get('a')!.balance, 100n)
})

test('known accounts - an older state than the one remembered is ignored; a newer one, or one as new, replaces it', () => {
  const known = new KnownAccounts({ ...options, entries_max: 10 })
  const at = (seq: bigint, posted: bigint, balance: bigint): AccountState => (
    { ...state('a', balance), last_seq: seq, last_posted: posted })
  // The batch after this one was built from its state and remembered what it leaves; this
  // one's own remembering, as it commits, comes later and must not take that back.
  known.remember([at(7n, 3n, 70n)])
  known.remember([at(5n, 3n, 50n)])
  assert.equal(known.take(['a'])!.get('a')!.balance, 70n, 'a lower sequence is older')
  known.remember([at(7n, 2n, 60n)])
  assert.equal(known.take(['a'])!.get('a')!.balance, 70n,
    'the same sequence with fewer postings is older')
  known.remember([at(7n, 3n, 75n)])
  assert.equal(known.take(['a'])!.get('a')!.balance, 75n, 'as new replaces it')
  known.remember([at(8n, 3n, 80n)])
  assert.equal(known.take(['a'])!.get('a')!.balance, 80n)
  known.forget(['a'])
  known.remember([at(5n, 3n, 50n)])
  assert.equal(known.take(['a'])!.get('a')!.balance, 50n, 'once forgotten, any state is remembered')
})

test('known accounts - forget drops accounts; beyond entries_max the least recently written go first', () => {
  const known = new KnownAccounts({ ...options, entries_max: 3 })
  known.remember([state('a'), state('b'), state('c')])
  known.remember([state('a', 7n)])
  known.remember([state('d')])
  assert.equal(known.size, 3)
  assert.equal(known.take(['b']), undefined, 'b was written least recently')
  assert.equal(known.take(['a', 'c', 'd'])!.get('a')!.balance, 7n)
  known.forget(['c'])
  assert.equal(known.take(['c']), undefined)
  assert.equal(known.size, 2)
})

test('known accounts - a paused account is not taken until its pause ends, even when remembered again', () => {
  let now = 1_000
  const known = new KnownAccounts({ ...options, entries_max: 10, stale_pause_ms: 500,
    now: () => now })
  known.remember([state('a'), state('b')])
  known.pause(['a'])
  assert.equal(known.take(['a']), undefined)
  known.remember([state('a')])
  assert.equal(known.take(['a']), undefined, 'remembered during its pause: still read under lock')
  assert.ok(known.take(['b']), 'other accounts are not paused')
  now += 500
  assert.equal(known.take(['a'])!.get('a')!.balance, 100n, 'after the pause it is guessed again')
})

test('known accounts - stale_max stale guesses within a window suspend all guessing for suspend_ms', () => {
  let now = 0
  const known = new KnownAccounts({ ...options, window_guesses: 10, stale_max: 3, suspend_ms: 1000,
    now: () => now })
  known.remember([state('a')])
  known.guessed(true)
  known.guessed(false)
  known.guessed(true)
  assert.ok(known.take(['a']), 'two stale guesses of three: still guessing')
  known.guessed(true)
  assert.equal(known.suspended, true)
  assert.equal(known.take(['a']), undefined, 'suspended: every batch reads its accounts under lock')
  now += 1000
  assert.equal(known.suspended, false)
  assert.ok(known.take(['a']), 'after suspend_ms it guesses again')
})

test('known accounts - stale guesses spread over many windows do not suspend guessing', () => {
  const known = new KnownAccounts({ ...options, window_guesses: 10, stale_max: 3, suspend_ms: 1000,
    now: () => 0 })
  known.remember([state('a')])
  for (let i = 0; i < 100; i++) known.guessed(i % 10 < 2)
  assert.equal(known.suspended, false)
  assert.ok(known.take(['a']))
})
