import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { SMTPServer } from 'smtp-server'
import { SmtpNotifier } from '../../src/notify/smtp-notifier.ts'
import { expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { balances, fund, sast } from '../transfers/helpers.ts'
import { batchBody, payment } from '../bulk/helpers.ts'

// E-mail through a real SMTP server on loopback (smtp-server, the protocol as a mail
// server speaks it): the bank configured with BANK_SMTP_URL sends one-time PINs there, a
// key goes out once, and a server that refuses the message or is away makes the batch
// end failed with its hold released (503), never a batch whose PIN nobody received.

interface Mail {
  from: string
  to: string[]
  raw: string
}

class MailServer {
  readonly mails: Mail[] = []
  /** Refuse every recipient with 550 while set. */
  refuse = false
  private readonly server: SMTPServer
  port = 0

  constructor() {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        if (this.refuse) return callback(Object.assign(new Error('mailbox unavailable'),
          { responseCode: 550 }))
        callback()
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = []
        stream.on('data', (chunk: Buffer) => chunks.push(chunk))
        stream.on('end', () => {
          this.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          })
          callback()
        })
      },
    })
  }

  async start(port = 0): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', () => resolve()))
    this.port = (this.server.server.address() as AddressInfo).port
  }

  stop(): Promise<void> {
    return new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

const mail = new MailServer()
await mail.start()
const tb = useTestBank({
  env: { BANK_SANDBOX: 'true', BANK_SMTP_URL: `smtp://127.0.0.1:${mail.port}`, BANK_MAIL_FROM: 'payments@bank.example', BANK_SMTP_TIMEOUT_MS: '2000' },
})
let p: TestPartner
let pool: string
let email: string

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  p = await onboardPartner(tb, { approve: true })
  pool =
    (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
  await fund(tb, pool, 10_000_000)
  email = (await tb.bank.database.db.selectFrom('entities').select('email').where('id', '=',
    p.rootEntityId).executeTakeFirstOrThrow()).email
  tb.clock.set(sast('2026-11-23', '09:00'))
})

after(async () => {
  await mail.stop().catch(() => undefined)
})

test('notify - with BANK_SMTP_URL the one-time PIN is e-mailed through the SMTP server, and it verifies the batch', async () => {
  const body = batchBody(p.rootEntityId, [payment(1, { real_time: true })])
  const before = mail.mails.length
  await p.client.bulkPayments.initiate(body)
  assert.equal(mail.mails.length, before + 1)
  const sent = mail.mails.at(-1)!
  assert.equal(sent.from, 'payments@bank.example')
  assert.deepEqual(sent.to, [email])
  const otp = /one-time PIN is (\d{6})/.exec(sent.raw)?.[1]
  assert.ok(otp, 'the e-mail carries the PIN')
  const verified = await p.client.bulkPayments.verify(
    { entity_id: p.rootEntityId, bulk_payment_id: body.bulk_payment_id, otp })
  assert.equal(verified.status, 'processing')
  const stored = await tb.bank.database.db.selectFrom('notifier_sent').selectAll().execute()
  assert.ok(stored.some((row) => row.recipient === email), 'the sent key is recorded')
  assert.ok(stored.every((row) => !JSON.stringify(row).includes(otp)), 'no PIN is kept')
  const recorded = await tb.bank.database.db.selectFrom('notifier_messages').selectAll().execute()
  assert.deepEqual(recorded, [], 'the simulated notifier is not used')
})

test('notify - a PIN the SMTP server refuses ends the batch failed with its hold released (503)', async () => {
  const before = await balances(p, pool)
  const body = batchBody(p.rootEntityId, [payment(1)])
  mail.refuse = true
  try {
    await expectRefusal(p.client.bulkPayments.initiate(body), 503)
  } finally {
    mail.refuse = false
  }
  const status = await p.client.bulkPayments.status(
    { entity_id: p.rootEntityId, bulk_payment_id: body.bulk_payment_id })
  assert.equal(status.status, 'failed')
  assert.deepEqual(await balances(p, pool), before, 'nothing is held')
})

test('notify - a key is e-mailed once; with the SMTP server away a send fails and the next one after its return goes out', async () => {
  const notifier = new SmtpNotifier(tb.bank.database.db, tb.clock, { url: `smtp://127.0.0.1:${mail.port}`, from: 'payments@bank.example', timeout_ms: 2000 })
  const before = mail.mails.length
  const message = { key: `test:${Date.now()}`, to: 'someone@example.com', subject: 'Hello',
    text: 'Once only.' }
  await notifier.send(message)
  await notifier.send(message)
  assert.equal(mail.mails.length, before + 1, 'the same key goes out once')

  const port = mail.port
  await mail.stop()
  const away = { key: `test:away:${Date.now()}`, to: 'someone@example.com', subject: 'Later',
    text: 'When the server is back.' }
  await assert.rejects(notifier.send(away), /ECONNREFUSED|connect/i)
  assert.equal(await tb.bank.database.db.selectFrom('notifier_sent').select('key').where('key', '=',
    away.key).executeTakeFirst(), undefined)
  const back = new MailServer()
  await back.start(port)
  try {
    await notifier.send(away)
    assert.equal(back.mails.length, 1)
    assert.ok(back.mails[0]!.raw.includes('When the server is back.'))
  } finally {
    await back.stop()
  }
})
