import assert from 'node:assert/strict'
import { test } from 'node:test'
import { adviceMessage, formatRand } from '../../src/transfers/payment-advice.ts'

// The payment advice's words, without a bank: amounts in rand from integer cents (never
// through a float), the SAST date, and a subject that stays short whatever the payer's name.

test('transfers - formatRand writes cents as rand with thousands separators, exactly', () => {
  const cases: Array<[bigint, string]> = [
    [0n, 'R0.00'],
    [1n, 'R0.01'],
    [99n, 'R0.99'],
    [100n, 'R1.00'],
    [123_456n, 'R1,234.56'],
    [100_000_000n, 'R1,000,000.00'],
    [500_000_000n, 'R5,000,000.00'],
    [9_007_199_254_740_993n, 'R90,071,992,547,409.93'],
  ]
  for (const [cents, text] of cases) assert.equal(formatRand(cents), text)
  assert.throws(() => formatRand(-1n), /never negative/)
})

test('transfers - an advice dates the payment in SAST, across midnight UTC', () => {
  const message = adviceMessage({
    recipientName: '',
    payerName: 'Payer',
    amount: 100n,
    ref: 'r',
    paymentType: 'RTC',
    paidAt: new Date('2026-11-27T22:30:00Z'),
    txId: 'id',
  })
  assert.ok(message.text.includes('Date:        2026-11-28 00:30 SAST'), message.text)
})

test("transfers - an advice's subject shortens a long payer name; the text keeps it whole", () => {
  const long = 'N'.repeat(200)
  const message = adviceMessage({ recipientName: 'R', payerName: long, amount: 100n, ref: 'r',
    paymentType: 'EFT', paidAt: new Date(), txId: 'id' })
  assert.ok(message.subject.length <= 120, message.subject)
  assert.ok(message.subject.endsWith('…'))
  assert.ok(message.text.includes(`Paid by:     ${long}`))
})
