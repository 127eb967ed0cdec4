import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { mayHoldUnstorableText, request_depth_max, unstorableTextIssues } from '../../src/contract/text-rules.ts'

// The decode step walks a request's parsed body for unstorable text only when its JSON text
// may hold some (mayHoldUnstorableText). Skipping the walk must never let through what the
// walk would refuse: whatever the body, if the text is called clean the walk finds nothing.

const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('\u0000', '\u0007', '\n', '\u007f', '\u0085', '\u009b', '\ud800', 'x\udc00',
    '\ud83c\udfe6', '"\\'),
)

const body = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    anyText,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(anyText, tie('value'), { maxKeys: 4 }),
  ),
})).value

test('text rules - a JSON text called clean never holds text the walk refuses, at any depth', () => {
  fc.assert(
    fc.property(body, (value) => {
      const json = JSON.stringify(value)
      if (!mayHoldUnstorableText(json)) assert.deepEqual(unstorableTextIssues(JSON.parse(json)), [])
    }),
    { numRuns: 5000 },
  )
})

test('text rules - escapes, C1 characters and deep nesting send a text to the walk; plain requests skip it', () => {
  for (const json of ['{"ref":"a\\u0000b"}', '{"ref":"a\\nb"}', '{"ref":"\\ud800"}',
      '{"ref":"a\u0085b"}', '{"a\\u0007":1}']) {
    assert.equal(mayHoldUnstorableText(json), true, json)
  }
  const deep = `{"a":${'['.repeat(request_depth_max + 1)}${']'.repeat(request_depth_max + 1)}}`
  assert.equal(mayHoldUnstorableText(deep), true)
  assert.ok(unstorableTextIssues(JSON.parse(deep)).some((issue) => /nested more than/.test(issue.message)))
  assert.equal(mayHoldUnstorableText('{"account_id":"6c1d3f9e-0d3a-4f4e-8c2b-1a2b3c4d5e6f",' +
    '"amount":100,"ref":"INV 7 – Zoë 🏦","items":[{"a":[1,2]}]}'), false)
  assert.equal(mayHoldUnstorableText(''), false)
})
