import assert from 'node:assert/strict'
import fs from 'node:fs'
import { test } from 'node:test'
import { Parser } from '@asyncapi/parser'
import { asyncApiPath, renderAsyncApi } from '../../scripts/asyncapi.ts'
import { channelAddress } from '../../src/contract/asyncapi.ts'
import { allOperations } from '../../src/contract/index.ts'

// The AsyncAPI document is generated from the endpoint table; these tests keep the
// checked-in copy valid and equal to what the table says today. No NATS, no database.

const severityError = 0

async function parse(text: string) {
  const { document, diagnostics } = await new Parser().parse(text)
  const errors = diagnostics.filter((d) => d.severity === severityError)
  assert.deepEqual(
    errors.map((d) => `${d.path.join('.')}: ${d.message}`),
    [],
    'the AsyncAPI parser reported errors',
  )
  assert.ok(document, 'the parser returned no document')
  return document
}

test('asyncapi - the checked-in docs/asyncapi.yaml equals a fresh build (run `npm run asyncapi`)', () => {
  assert.equal(fs.readFileSync(asyncApiPath, 'utf8'), renderAsyncApi())
})

test('asyncapi - the document parses as AsyncAPI 3.0.0 without errors', async () => {
  const document = await parse(fs.readFileSync(asyncApiPath, 'utf8'))
  assert.equal(document.version(), '3.0.0')
  assert.equal(document.info().title(), 'Partner banking service')
  assert.equal(document.servers().get('nats')?.protocol(), 'nats')
})

test('asyncapi - every subject of the endpoint table is a channel address, with a reply to the inbox', async () => {
  const document = await parse(renderAsyncApi())
  const addresses = new Set(document.channels().all().map((channel) => channel.address()))
  for (const op of allOperations()) {
    assert.ok(addresses.has(channelAddress(op)), `no channel for ${op.subject}`)
    const operation = document.operations().get(op.name)
    assert.ok(operation, `no operation ${op.name}`)
    assert.equal(operation.action(), 'receive')
    assert.equal(operation.channels().all()[0]?.address(), channelAddress(op))
    const reply = operation.reply()
    assert.ok(reply, `${op.name} has no reply`)
    assert.equal(reply.channel()?.address(), null, `${op.name} must reply on the requester's inbox`)
    assert.deepEqual(reply.messages().all().map((m) => m.name()).sort(),
      ['ErrorReply', `${op.name}_reply`])
  }
  assert.equal(document.operations().all().length, allOperations().length)
})

test('asyncapi - a placeholder in a subject becomes a channel parameter', () => {
  for (const op of allOperations()) {
    const address = channelAddress(op)
    assert.ok(!address.includes('<'), `${address} still has a <placeholder>`)
    if (op.permission === 'operator' || op.permission === 'card_network') assert.ok(
      !address.includes('{'), `${address}: operator and card network subjects have no parameter`)
    else assert.match(address, /\{(partner_id|entity_id)\}/)
  }
})
