import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { SimulatedNotifier } from '../../src/notify/simulated-notifier.ts'
import { useTestBank } from '../support/harness.ts'

// The simulated notifier (src/notify): it records each message in the database, shared by
// every instance, and sends a key once, as a real sender must when a job that sent is run
// again after a crash.

const tb = useTestBank()
let notifier: SimulatedNotifier

before(async () => {
  await tb.ready
  notifier = new SimulatedNotifier(tb.bank.database.db, tb.clock)
})

test('notify - a message is recorded with its recipient, subject, text and the time on the bank clock', async () => {
  tb.clock.set('2026-11-23T08:00:00Z')
  await notifier.send({ key: 'test:one', to: 'one@example.com', subject: 'Hello',
    text: 'Line 1\nLine 2' })
  const [message] = await notifier.list({ limit: 10, to: 'one@example.com' })
  assert.ok(message)
  assert.equal(message.key, 'test:one')
  assert.equal(message.to, 'one@example.com')
  assert.equal(message.subject, 'Hello')
  assert.equal(message.text, 'Line 1\nLine 2')
  assert.equal(message.created_at.toISOString(), '2026-11-23T08:00:00.000Z')
})

test('notify - the same key sent again, even with other content, sends nothing more', async () => {
  await notifier.send({ key: 'test:twice', to: 'twice@example.com', subject: 'First',
    text: 'first' })
  await notifier.send({ key: 'test:twice', to: 'twice@example.com', subject: 'Second',
    text: 'second' })
  await Promise.all([1, 2, 3].map(() => notifier.send({ key: 'test:twice', to: 'twice@example.com',
    subject: 'Third', text: 'third' })))
  const messages = await notifier.list({ limit: 10, to: 'twice@example.com' })
  assert.deepEqual(messages.map((m) => m.subject), ['First'])
})

test('notify - the same keys sent at once by two notifiers (two instances) are each recorded once', async () => {
  const second = new SimulatedNotifier(tb.bank.database.db, tb.clock)
  const keys = Array.from({ length: 10 }, (_, i) => `test:race:${i}`)
  await Promise.all(keys.flatMap((key) => [notifier, second].map(
    (n) => n.send({ key, to: 'race@example.com', subject: key, text: '' }))))
  const messages = await notifier.list({ limit: 100, to: 'race@example.com' })
  assert.deepEqual(messages.map((m) => m.key).sort(), [...keys].sort())
})

test('notify - list is newest first, at most limit, narrowed to one recipient when asked', async () => {
  for (const n of [1, 2, 3]) await notifier.send({ key: `test:order:${n}`, to: 'order@example.com',
    subject: `#${n}`, text: '' })
  await notifier.send({ key: 'test:order:other', to: 'someone-else@example.com', subject: 'other',
    text: '' })
  assert.deepEqual((await notifier.list({ limit: 2, to: 'order@example.com' })).map(
    (m) => m.subject), ['#3', '#2'])
  assert.deepEqual((await notifier.list({ limit: 1 })).map((m) => m.subject), ['other'])
})

test('notify - list takes 1 to 1000 messages; anything else is a programming mistake', async () => {
  assert.equal((await notifier.list({ limit: 1000 })).length > 0, true)
  for (const limit of [0, 1001, 1.5]) await assert.rejects(notifier.list({ limit }), /1-1000/)
})

test('notify - an empty key or an oversized subject or text is refused before anything is recorded', async () => {
  await assert.rejects(notifier.send({ key: '', to: 'x@example.com', subject: 's', text: 't' }), /key/)
  await assert.rejects(notifier.send({ key: 'test:big-subject', to: 'x@example.com', subject: 's'.repeat(201), text: 't' }), /subject/)
  await assert.rejects(notifier.send({ key: 'test:big-text', to: 'x@example.com', subject: 's', text: 't'.repeat(10_001) }), /text/)
  await notifier.send({ key: 'test:limits', to: 'x@example.com', subject: 's'.repeat(200),
    text: 't'.repeat(10_000) })
  assert.deepEqual((await notifier.list({ limit: 10, to: 'x@example.com' })).map((m) => m.key),
    ['test:limits'])
})
