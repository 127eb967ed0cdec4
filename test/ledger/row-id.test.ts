import assert from 'node:assert/strict'
import { test } from 'node:test'
import { z } from 'zod'
import { newRowId } from '../../src/ledger/row-id.ts'

// newRowId (src/ledger/row-id.ts): a UUID version 7 (RFC 9562) whose first 48 bits are the
// Unix time in ms, so that the ledger's ids sort in the order they were made and its
// indexes grow at their right-hand edge; the other 74 bits random.

const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The time in ms held in an id's first 12 hex digits. */
const timeOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16)

/** The 74 random bits' digits: all after the version nibble. */
const randomOf = (id: string) => id.slice(15)

const times = [0, 1, 15, 16, 255, 256, Date.now(), 2 ** 32, 2 ** 48 - 1]

test('newRowId: an RFC 9562 version 7 id, lower-case, variant 10', () => {
  for (const now of [...times, undefined]) {
    const id = newRowId(now)
    assert.match(id, v7, `now=${now}`)
    assert.equal(id.length, 36)
  }
})

test('newRowId: the first 12 hex digits are the given time in ms', () => {
  for (const now of times) assert.equal(timeOf(newRowId(now)), now, `now=${now}`)
  assert.equal(newRowId(0).slice(0, 13), '00000000-0000')
  assert.equal(newRowId(2 ** 48 - 1).slice(0, 13), 'ffffffff-ffff')
  const before = Date.now()
  const made = timeOf(newRowId())
  const after = Date.now()
  assert.ok(before <= made && made <= after,
    `default time ${made} not within [${before}, ${after}]`)
})

test('newRowId: ids made at increasing times sort as strings in time order', () => {
  const increasing = [...times].sort((a, b) => a - b)
  for (let i = 0; i < 200; i++) increasing.push(Date.now() + i * 997)
  increasing.sort((a, b) => a - b)
  const ids = increasing.map((now) => newRowId(now))
  const sorted = [...ids].sort()
  assert.deepEqual(sorted, ids)
  // Each one strictly after the one before, whatever their random parts.
  for (let i = 1; i < ids.length; i++) {
    if (increasing[i] !== increasing[i - 1]) assert.ok(ids[i]! > ids[i - 1]!,
      `${ids[i]} !> ${ids[i - 1]}`)
  }
})

test('newRowId: 100,000 ids of one millisecond are all distinct', () => {
  const now = Date.now()
  const ids = new Set<string>()
  for (let i = 0; i < 100_000; i++) ids.add(newRowId(now))
  assert.equal(ids.size, 100_000)
})

test('newRowId: the random part differs between two ids of the same millisecond', () => {
  const now = Date.now()
  const a = newRowId(now)
  const b = newRowId(now)
  assert.equal(a.slice(0, 15), b.slice(0, 15))
  assert.notEqual(randomOf(a), randomOf(b))
  // And it is not constant in any one place: over many ids, every random digit takes
  // several values (the variant digit 8, 9, a or b).
  const ids = Array.from({ length: 1000 }, () => newRowId(now))
  for (let i = 15; i < 36; i++) {
    if (i === 18 || i === 23) continue
    const seen = new Set(ids.map((id) => id[i]))
    assert.ok(seen.size >= (i === 19 ? 4 : 10), `digit ${i} takes only ${[...seen].join('')}`)
  }
})

test("newRowId: zod's z.uuid() accepts it", () => {
  const schema = z.uuid()
  for (const now of [...times, undefined]) {
    const id = newRowId(now)
    assert.equal(schema.safeParse(id).success, true, id)
  }
  // and rejects what is not one, so the check above means something
  assert.equal(schema.safeParse(newRowId(0).replace('-7', '-0')).success, false)
})
