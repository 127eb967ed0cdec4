import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import fc from 'fast-check'
import { asStored, canonicalForm, canonicalTime, chainHash } from '../../src/ledger/tx-chain.ts'
import { assertLedgerClean, expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, newAccount, transferBody, txById } from '../transfers/helpers.ts'

// The hash chain is computed over exactly what the database stores, in a canonical form
// the ledger owns. An unpaired surrogate used to be hashed as sent but stored as U+FFFD,
// so any partner with `payments` could make `ledger verify` fail for the whole bank.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

test('ledger - a partner cannot send an unpaired surrogate into the ledger', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  await expectRefusal(p.client.accounts.transfer(transferBody(account, { ref: 'pay \ud800' })), 400,
    'ref')
  await assertLedgerClean(tb)
})

test('ledger - text that reaches the ledger unchecked is hashed as stored, so the chain still verifies', async () => {
  const account = await newAccount(p)
  // Below the contract: the ledger's own guarantee, whatever a future caller passes it.
  const deposit = await tb.bank.services.ledger.deposit(account, 5_000n, 'seed \ud800 \udfff',
    'test')
  const row = await txById(p, deposit.txId)
  assert.equal(row.ref, 'seed \ufffd \ufffd', 'stored as UTF-8 can hold it')
  assert.equal(row.verified, true)
  await fund(tb, account, 1_000)
  await assertLedgerClean(tb)
})

test('ledger - stored proofs do not change: the canonical form of a known row hashes as it always has', () => {
  const row = {
    id: '0b5f8a2e-5a43-4d8e-9f59-3f1c2f1d2a11',
    account_id: '6c1d3f9e-0d3a-4f4e-8c2b-1a2b3c4d5e6f',
    seq: 7n,
    created_at: new Date('2026-11-23T08:00:00Z'),
    tx_type: 'transfer',
    tx_payment_type: 'EFT',
    amount: 150000n,
    fee: 250n,
    credit: 0n,
    debit: 150000n,
    ref: 'INV-1001',
    own_ref: 'Supplier payment',
    recipient_name: 'Supplier (Pty) Ltd',
    recipient_account: '62000000001',
    recipient_branch: '250655',
    parent_tx_id: null,
    added_by: 'ab5abae3-0000-4000-8000-000000000000',
    user_id: '',
  }
  const genesis = '0'.repeat(64)
  // Pinned from rows written before the ledger had a canonical form of its own.
  assert.equal(chainHash(genesis, row),
    '7c24ca69e7f86024e8342167aa18288f21e5a437d58a96a23435f9c8a5bc9705')
  assert.equal(
    chainHash(genesis, { ...row, created_at: new Date('2026-11-23T08:00:00.123Z') }),
    '7bc4b48c27ae812a8e0bbec3f35cfd6641a662aba17f13424f54dc935db5385b',
  )
})

test('ledger - the canonical form is the JSON text of the fields as stored, whatever they hold', () => {
  // canonicalForm writes the JSON out by hand for speed; it must equal JSON.stringify of the
  // 18 fields for any text (quotes, backslashes, control characters, lone surrogates) and any
  // time, or a row written now would not verify against the form every older proof used.
  const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }),
    fc.constantFrom('"', '\\', '\u0000\n\t', '\ud800x', 'x\udfff', '</script>'))
  const big = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
  fc.assert(
    fc.property(
      fc.record({
        id: fc.uuid(),
        account_id: fc.uuid(),
        seq: big,
        created_at: fc.date({ min: new Date('1970-01-01T00:00:00Z'),
          max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
        tx_type: text,
        tx_payment_type: text,
        amount: big,
        fee: big,
        credit: big,
        debit: big,
        ref: text,
        own_ref: text,
        recipient_name: text,
        recipient_account: text,
        recipient_branch: text,
        parent_tx_id: fc.option(fc.uuid(), { nil: null }),
        added_by: text,
        user_id: text,
      }),
      (tx) => {
        const expected = JSON.stringify([
          tx.id, tx.account_id, tx.seq.toString(), canonicalTime(tx.created_at), tx.tx_type,
            tx.tx_payment_type,
          tx.amount.toString(), tx.fee.toString(), tx.credit.toString(), tx.debit.toString(),
          ...[tx.ref, tx.own_ref, tx.recipient_name, tx.recipient_account, tx.recipient_branch].map((t) => t.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')),
          tx.parent_tx_id ?? '', asStored(tx.added_by), asStored(tx.user_id),
        ])
        assert.equal(canonicalForm(tx), expected)
      },
    ),
    { numRuns: 2000 },
  )
})
