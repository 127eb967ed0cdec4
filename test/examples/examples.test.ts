import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { before, test } from 'node:test'
import { main as bulkBatch } from '../../examples/bulk-batch.ts'
import { main as cardSpend } from '../../examples/card-spend.ts'
import { main as debitOrder } from '../../examples/debit-order.ts'
import { main as firstPayment } from '../../examples/first-payment.ts'
import { useTestBank } from '../support/harness.ts'

// Every example of examples/ runs against a test bank, twice (each creates what it needs
// with values of its own, so a second run must succeed as the first did), in this process
// through its exported main(env, print), and must reach its last step, so that none rots.

const tb = useTestBank()
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

before(async () => {
  await tb.ready
})

/**
 * The environment a user's shell would give `npm run example`: where the bank is, and an operator
 * credential.
 */
const env = () => ({ NATS_URL: tb.natsUrl, BANK_OPERATOR_TOKEN: tb.operatorToken })

async function run<R>(main: (env: NodeJS.ProcessEnv,
    print: (line: string) => void) => Promise<R>): Promise<{ result: R; lines: string[] }> {
  const lines: string[] = []
  const result = await main(env(), (line) => lines.push(line))
  return { result, lines }
}

/** The steps an example printed (`1. …`), in order, with the lines under the last one. */
function steps(lines: string[]): { titles: string[]; last: string[] } {
  const titles = lines.filter((line) => /^\d+\. /.test(line))
  titles.forEach((title, i) => assert.ok(title.startsWith(`${i + 1}. `),
    `steps are numbered in order: ${title}`))
  const lastIndex = lines.lastIndexOf(titles.at(-1)!)
  return { titles, last: lines.slice(lastIndex) }
}

test('examples - first-payment settles an EFT, and runs again', async () => {
  const partners = new Set<string>()
  for (const round of [1, 2]) {
    const { result, lines } = await run(firstPayment)
    const { titles, last } = steps(lines)
    assert.equal(titles.length, 12, `round ${round}:\n${lines.join('\n')}`)
    assert.equal(titles[0], '1. Connect as the operator')
    assert.equal(lines[1], `   NATS ${tb.natsUrl} (NATS_URL)`)
    assert.ok(lines.includes('   EFT R1,500.00 fee R2.50: Successful'), lines.join('\n'))
    assert.deepEqual(last, ['12. Done: the first payment is settled',
      `   Successful ${result.txId}`])
    assert.equal(result.status, 'Successful')
    // R2,000.00 in, R1,500.00 and the EFT fee out: the newest transaction shows what is left.
    const listed = lines.indexOf("11. The customer's transactions, newest first")
    assert.match(lines[listed + 1]!, / fee EFT Successful credit R0\.00 debit R2\.50 balance R497\.50$/)
    partners.add(result.partnerId)
  }
  assert.equal(partners.size, 2, 'each run onboards a partner of its own')
})

test('examples - bulk-batch completes a batch confirmed with its PIN, its webhooks verified, and runs again', async () => {
  for (const round of [1, 2]) {
    const { result, lines } = await run(bulkBatch)
    const { titles, last } = steps(lines)
    assert.equal(titles.length, 8, `round ${round}:\n${lines.join('\n')}`)
    assert.deepEqual(last, ['8. Done: the batch is completed',
      `   completed ${result.bulkPaymentId}, ${result.webhooks.length} signed webhooks received`])
    assert.ok(lines.includes('   completed: 10 paid (R2,545.00), 1 failed (R260.00)'),
      lines.join('\n'))
    assert.equal(result.status, 'completed')
    // bulk_payment.verified, a payment event each, bulk_payment.completed (the batch's events in
    // order).
    assert.equal(result.webhooks[0], 'bulk_payment.verified')
    assert.equal(result.webhooks.filter((type) => type === 'payment.success').length, 10)
    assert.equal(result.webhooks.filter((type) => type === 'payment.failed').length, 1)
    assert.equal(result.webhooks.at(-1), 'bulk_payment.completed')
  }
})

test('examples - debit-order collects two months on its partner\'s sandbox clock, and runs again; the bank\'s clock stays', async () => {
  for (const round of [1, 2]) {
    const before = (await tb.operator.sandbox.clock()).now
    const { result, lines } = await run(debitOrder)
    const { titles, last } = steps(lines)
    assert.deepEqual(last, ['10. Done: the debit order has run its course',
      `   successful ${result.debitOrderId}`], `round ${round}:\n${lines.join('\n')}`)
    assert.equal(titles.filter((title) => / Advance your clock to collection \d$/.test(title)).length, 2)
    assert.equal(result.collections, 2)
    assert.equal(lines.filter((line) => / Successful amount R150\.00 fee R3\.50 credit R146\.50 /.test(line)).length, 2, lines.join('\n'))
    const moved = lines.filter((line) => /^ {3}now /.test(line)).at(-1) ?? ''
    assert.ok(Date.parse(moved.slice(7, 31)) > Date.parse(before) + 30 * 86_400_000,
      `its partner's clock moved more than a month: ${moved}`)
    assert.equal((await tb.operator.sandbox.clock()).now, before, 'the bank\'s clock did not move')
  }
})

test('examples - card-spend issues a card with four eyes; it pays, is declined, cleared, refunded', async () => {
  for (const round of [1, 2]) {
    const { result, lines } = await run(cardSpend)
    const { titles, last } = steps(lines)
    const all = `round ${round}:\n${lines.join('\n')}`
    assert.equal(titles.length, 11, all)
    const done = '11. Done: the card has paid, been declined, cleared and refunded'
    assert.deepEqual(last, [done, '   balance R900.00'], all)
    assert.ok(lines.some((line) => /^   the holder herself may not: 400 .*four eyes/.test(line)), all)
    assert.ok(lines.includes('   pending: held R120.50'), all)
    assert.ok(lines.includes('   balance R1,000.00, available R879.50'), all)
    assert.ok(lines.includes('   approved false: limit_exceeded'), all)
    assert.ok(lines.includes('   cleared: R135.50'), all)
    assert.equal(result.declineReason, 'limit_exceeded')
    // Newest first: the refund, the adjustment (the tip), the authorization's row, the deposit.
    const at = lines.indexOf("10. The account's transactions, newest first")
    const rows = lines.slice(at + 1, at + 5).map((line) => line.replace(/ ref \d{4} /, ' ref NNNN '))
    assert.deepEqual(rows, [
      '   refund CARD Successful Corner Cafe ref NNNN credit R35.50 debit R0.00',
      '   card CARD Successful Corner Cafe ref NNNN credit R0.00 debit R15.00 (adjustment)',
      '   card CARD Successful Corner Cafe ref NNNN credit R0.00 debit R120.50',
      '   deposit EFT Successful ref float credit R1,000.00 debit R0.00',
    ], all)
  }
})

test('examples - npm run example: a bank that is not there is named with the URL tried and where it came from', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/run.ts', 'first-payment'], {
    cwd: root,
    env: { PATH: process.env.PATH, NATS_URL: 'nats://127.0.0.1:1', BANK_OPERATOR_TOKEN: tb.operatorToken },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  assert.equal(code, 1, stderr)
  assert.match(stdout, /^1\. Connect as the operator\n   NATS nats:\/\/127\.0\.0\.1:1 \(NATS_URL\)\n$/)
  assert.match(stderr, /^cannot reach NATS at nats:\/\/127\.0\.0\.1:1 \(from NATS_URL\): connection refused.*\nIs the bank running\? Start it with `npm start`/)
})

test("examples - the README's Quickstart quotes examples/first-payment.ts as it is", () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  const quickstart = readme.slice(readme.indexOf('## Quickstart'),
    readme.indexOf('\n## ', readme.indexOf('## Quickstart') + 1))
  const source = fs.readFileSync(path.join(root, 'examples/first-payment.ts'), 'utf8')
  const quoted = [...quickstart.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
  assert.ok(quoted.length >= 5, 'the Quickstart explains the code in excerpts')
  for (const excerpt of quoted) assert.ok(source.includes(excerpt),
    `not in examples/first-payment.ts:\n${excerpt}`)
  assert.match(quickstart, /```sh\nnpm start\n```/)
  assert.match(quickstart, /```sh\nnpm run example -- first-payment\n```/)
})
